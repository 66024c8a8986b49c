package inject

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// typedFrom fills the struct dst points to from obj, a JSON object as
// Parse decodes it, as strict decoding of that object's JSON would
// (sigs.k8s.io/json: field names matched exactly, unknown fields
// refused): the Pod is decoded once, not once as a tree and again as its
// spec. A string of the tree is shared, not copied.
//
// ok is false wherever it is not sure to decode as that decoder would:
// an unknown field, a value of another JSON type than its field's, a
// number its field cannot hold, a field type it does not handle (an
// interface, a byte slice, an array, a text unmarshaler, an embedded
// pointer, two fields of one name). The caller then decodes the JSON
// strictly, whose answer or error stands.
//
// It cannot see a key given twice, which the tree no longer holds, so it
// says how many members the objects it read had: the caller counts them
// in the JSON too (colons), and they differ exactly when a key came twice.
func typedFrom(obj map[string]any, dst any) (members int, ok bool) {
	var f filler
	ok = f.setValue(reflect.ValueOf(dst).Elem(), obj)
	return f.members, ok
}

// filler is one reading by typedFrom: the members of the objects read so
// far.
type filler struct{ members int }

// setValue decodes x into v, which is addressable.
func (f *filler) setValue(v reflect.Value, x any) bool {
	t := v.Type()
	if t.Kind() == reflect.Pointer {
		if x == nil {
			v.SetZero()
			return true
		}
		if v.IsNil() {
			v.Set(reflect.New(t.Elem()))
		}
		return f.setValue(v.Elem(), x)
	}
	info := infoOf(t)
	switch {
	case info.json:
		switch x.(type) {
		case map[string]any, []any: // not counted: left to the decoder (no such field in a PodSpec reads one)
			return false
		}
		data, err := appendValue(nil, x)
		if err != nil {
			return false
		}
		return v.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(data) == nil
	case info.text:
		return false
	}
	switch x := x.(type) {
	case nil:
		switch t.Kind() {
		case reflect.Map, reflect.Slice, reflect.Interface:
			v.SetZero()
		}
		return true
	case string:
		if t.Kind() != reflect.String {
			return false
		}
		v.SetString(x)
		return true
	case bool:
		if t.Kind() != reflect.Bool {
			return false
		}
		v.SetBool(x)
		return true
	case json.Number:
		return setNumber(v, string(x))
	case []any:
		return f.setSlice(v, x)
	case map[string]any:
		switch t.Kind() {
		case reflect.Struct:
			return info.fieldsOK && f.setStruct(v, info.fields, x)
		case reflect.Map:
			return f.setMap(v, x)
		}
	}
	return false
}

func setNumber(v reflect.Value, s string) bool {
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v.OverflowInt(n) {
			return false
		}
		v.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil || v.OverflowUint(n) {
			return false
		}
		v.SetUint(n)
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(s, v.Type().Bits())
		if err != nil || v.OverflowFloat(f) {
			return false
		}
		v.SetFloat(f)
	default:
		return false
	}
	return true
}

func (f *filler) setSlice(v reflect.Value, items []any) bool {
	if v.Kind() != reflect.Slice || v.Type().Elem().Kind() == reflect.Uint8 {
		return false
	}
	s := reflect.MakeSlice(v.Type(), len(items), len(items))
	for i, x := range items {
		if !f.setValue(s.Index(i), x) {
			return false
		}
	}
	v.Set(s)
	return true
}

func (f *filler) setMap(v reflect.Value, obj map[string]any) bool {
	f.members += len(obj)
	t := v.Type()
	if t.Key().Kind() != reflect.String || infoOf(t.Key()).text {
		return false
	}
	m := reflect.MakeMapWithSize(t, len(obj))
	for k, x := range obj {
		e := reflect.New(t.Elem()).Elem()
		if !f.setValue(e, x) {
			return false
		}
		m.SetMapIndex(reflect.ValueOf(k).Convert(t.Key()), e)
	}
	v.Set(m)
	return true
}

func (f *filler) setStruct(v reflect.Value, fields map[string][]int, obj map[string]any) bool {
	f.members += len(obj)
	for k, x := range obj {
		index, ok := fields[k]
		if !ok || !f.setValue(v.FieldByIndex(index), x) {
			return false
		}
	}
	return true
}

// typeInfo is what setValue needs to know of a type, worked out once.
type typeInfo struct {
	json, text bool // *T is a json.Unmarshaler, an encoding.TextUnmarshaler
	// A struct's JSON names and their fields, embedded structs' fields
	// among them; fieldsOK is false for a struct typedFrom leaves to the
	// decoder.
	fields   map[string][]int
	fieldsOK bool
}

var (
	typeInfos       sync.Map // reflect.Type → *typeInfo
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func infoOf(t reflect.Type) *typeInfo {
	if info, ok := typeInfos.Load(t); ok {
		return info.(*typeInfo)
	}
	p := reflect.PointerTo(t)
	info := &typeInfo{json: p.Implements(jsonUnmarshaler), text: p.Implements(textUnmarshaler)}
	if t.Kind() == reflect.Struct {
		info.fields, info.fieldsOK = structFields(t)
	}
	typeInfos.Store(t, info)
	return info
}

// structFields maps a struct's JSON names to their fields.
func structFields(t reflect.Type) (map[string][]int, bool) {
	names, ok := map[string][]int{}, true
	var walk func(t reflect.Type, at []int)
	walk = func(t reflect.Type, at []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			index := append(append([]int(nil), at...), i)
			tag := f.Tag.Get("json")
			name, opts, _ := strings.Cut(tag, ",")
			switch {
			case tag == "-":
				continue
			case f.Anonymous && name == "":
				if f.Type.Kind() != reflect.Struct {
					ok = false
					continue
				}
				walk(f.Type, index)
				continue
			case !f.IsExported():
				continue
			case strings.Contains(","+opts+",", ",string,"):
				ok = false
			}
			if name == "" {
				name = f.Name
			}
			if _, twice := names[name]; twice {
				ok = false
			}
			names[name] = index
		}
	}
	walk(t, nil)
	return names, ok
}

// colons counts the members of every object in JSON: a ':' outside
// strings each.
func colons(data []byte) int {
	n := 0
	for c := range outsideStrings(data) {
		if c == ':' {
			n++
		}
	}
	return n
}
