package inject

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
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
// interface, a byte slice, an array, a text unmarshaler, a JSON
// unmarshaler but those that parse a scalar (valueUnmarshalers), an
// embedded pointer, two fields of one name). The caller then decodes the
// JSON strictly, whose answer or error stands.
//
// It cannot see a key given twice, which the tree no longer holds, so it
// says how many members the objects it read had: the caller counts them
// in the JSON too (colons), and they differ exactly when a key came twice.
func typedFrom(obj map[string]any, dst any) (members int, ok bool) {
	v := reflect.ValueOf(dst).Elem()
	var f filler
	ok = f.setValue(v, infoOf(v.Type()), obj)
	return f.members, ok
}

// filler is one reading by typedFrom: the members of the objects read so
// far.
type filler struct{ members int }

// setValue decodes x into v, which is addressable and of info's type.
func (f *filler) setValue(v reflect.Value, info *typeInfo, x any) bool {
	if info.kind == reflect.Pointer {
		if x == nil {
			v.SetZero()
			return true
		}
		if v.IsNil() {
			v.Set(reflect.New(info.elem.t))
		}
		return f.setValue(v.Elem(), info.elem, x)
	}
	switch {
	case info.json:
		switch x.(type) {
		case map[string]any, []any: // not a scalar: left to the decoder, whose error it is
			return false
		}
		data, err := appendValue(nil, x)
		if err != nil {
			return false
		}
		return v.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(data) == nil
	case info.other:
		return false
	}
	switch x := x.(type) {
	case nil:
		switch info.kind {
		case reflect.Map, reflect.Slice, reflect.Interface:
			v.SetZero()
		}
		return true
	case string:
		if info.kind != reflect.String {
			return false
		}
		v.SetString(x)
		return true
	case bool:
		if info.kind != reflect.Bool {
			return false
		}
		v.SetBool(x)
		return true
	case json.Number:
		return setNumber(v, string(x))
	case []any:
		return f.setSlice(v, info, x)
	case map[string]any:
		switch info.kind {
		case reflect.Struct:
			return info.fieldsOK && f.setStruct(v, info.fields, x)
		case reflect.Map:
			return f.setMap(v, info, x)
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

func (f *filler) setSlice(v reflect.Value, info *typeInfo, items []any) bool {
	if info.kind != reflect.Slice || info.elem.kind == reflect.Uint8 {
		return false
	}
	s := reflect.MakeSlice(info.t, len(items), len(items))
	for i, x := range items {
		if !f.setValue(s.Index(i), info.elem, x) {
			return false
		}
	}
	v.Set(s)
	return true
}

func (f *filler) setMap(v reflect.Value, info *typeInfo, obj map[string]any) bool {
	f.members += len(obj)
	if info.key.kind != reflect.String || info.key.other {
		return false
	}
	m := reflect.MakeMapWithSize(info.t, len(obj))
	for k, x := range obj {
		e := reflect.New(info.elem.t).Elem()
		if !f.setValue(e, info.elem, x) {
			return false
		}
		m.SetMapIndex(reflect.ValueOf(k).Convert(info.key.t), e)
	}
	v.Set(m)
	return true
}

func (f *filler) setStruct(v reflect.Value, fields map[string]field, obj map[string]any) bool {
	f.members += len(obj)
	for k, x := range obj {
		field, ok := fields[k]
		if !ok {
			return false
		}
		fv := v.Field(field.index[0])
		if len(field.index) > 1 {
			fv = v.FieldByIndex(field.index)
		}
		if !f.setValue(fv, field.info, x) {
			return false
		}
	}
	return true
}

// typeInfo is what setValue needs to know of a type, worked out once for
// the type and every type it reaches, so that a reading looks nothing up
// but a field's name.
type typeInfo struct {
	t    reflect.Type
	kind reflect.Kind
	// *T is one of valueUnmarshalers; *T unmarshals itself otherwise (a
	// text unmarshaler, or a JSON one that may keep the bytes as written,
	// as FieldsV1 does, which a value written again would not give).
	json, other bool
	elem, key   *typeInfo // a pointer's, slice's or map's element; a map's key
	// A struct's JSON names and their fields, embedded structs' fields
	// among them; fieldsOK is false for a struct typedFrom leaves to the
	// decoder.
	fields   map[string]field
	fieldsOK bool
}

type field struct {
	index []int
	info  *typeInfo
}

var (
	typeInfos       sync.Map // reflect.Type → *typeInfo, complete
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	// valueUnmarshalers are the JSON unmarshalers typedFrom gives their
	// value written again: each parses a scalar, so the same value
	// written another way (escapes, a number's spelling kept) reads the
	// same.
	valueUnmarshalers = map[reflect.Type]bool{
		reflect.TypeFor[resource.Quantity](): true, reflect.TypeFor[intstr.IntOrString](): true, reflect.TypeFor[metav1.Time](): true,
	}
)

// infoOf is t's typeInfo, worked out on its first use.
func infoOf(t reflect.Type) *typeInfo {
	if info, ok := typeInfos.Load(t); ok {
		return info.(*typeInfo)
	}
	// Two first uses at once may both build it: the same, and one is kept.
	info, _ := typeInfos.LoadOrStore(t, buildInfo(t, map[reflect.Type]*typeInfo{}))
	return info.(*typeInfo)
}

// buildInfo works out t's typeInfo and those of the types it reaches;
// seen holds those begun, so that a type that reaches itself ends.
func buildInfo(t reflect.Type, seen map[reflect.Type]*typeInfo) *typeInfo {
	if info, ok := seen[t]; ok {
		return info
	}
	p := reflect.PointerTo(t)
	unmarshals := p.Implements(jsonUnmarshaler)
	info := &typeInfo{t: t, kind: t.Kind(), json: unmarshals && valueUnmarshalers[t]}
	info.other = !info.json && (unmarshals || p.Implements(textUnmarshaler))
	seen[t] = info
	switch info.kind {
	case reflect.Pointer, reflect.Slice:
		info.elem = buildInfo(t.Elem(), seen)
	case reflect.Map:
		info.elem, info.key = buildInfo(t.Elem(), seen), buildInfo(t.Key(), seen)
	case reflect.Struct:
		var names map[string][]int
		names, info.fieldsOK = structFields(t)
		info.fields = make(map[string]field, len(names))
		for name, index := range names {
			info.fields[name] = field{index, buildInfo(t.FieldByIndex(index).Type, seen)}
		}
	}
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
