package inject

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	kjson "sigs.k8s.io/json"

	"github.com/job-signal/job-signal/inject/jsonscan"
)

// MaxDepth bounds how deeply a template may nest. A PodSpec nests about 15
// levels; the bound keeps a hostile document from costing more than its
// size.
const MaxDepth = 100

// presence tells an absent member from a null one from one with a value:
// what inject adds where nothing was, uninject takes away again exactly.
type presence int

const (
	absent presence = iota
	null
	present
)

// template is a Pod template read once: the generic object (every field,
// known to this build or not) and the typed PodSpec decided on.
type template struct {
	raw         map[string]any
	spec        corev1.PodSpec
	annotations map[string]string
	metadata    presence // of metadata
	annState    presence // of metadata.annotations
	rawSpec     map[string]any
}

// readTemplate parses the JSON of a Pod template: an object with metadata
// and spec.
func readTemplate(data []byte) (*template, error) {
	p, err := Parse(data)
	if err != nil {
		return nil, err
	}
	return parsedTemplate(data, p)
}

// parsedTemplate is readTemplate of data that Parse decoded into p. Its
// spec's JSON is looked for only when templateOf needs it.
func parsedTemplate(data []byte, p Parsed) (*template, error) {
	return templateOf(p.Object, func() []byte { return memberBytes(data, "spec") }, p.noKeyTwice)
}

// Parsed is the JSON of a Pod template (or a Pod) as Parse decodes it.
type Parsed struct {
	Object map[string]any
	// noKeyTwice: no object in the JSON had a key twice, so Object holds
	// all it said, and the spec's JSON would read as Object's spec does.
	noKeyTwice bool
}

// Parse decodes the JSON of a Pod template (or a Pod) as readTemplate
// does: nested no deeper than MaxDepth, numbers kept as written. A caller
// that reads the object before preparing it (the webhook) decodes it
// once, with Parse, and prepares it with PrepareParsedFor.
//
// jsonscan.Decode reads what it can, for less; what it declines,
// encoding/json reads or refuses, with its own error.
func Parse(data []byte) (Parsed, error) {
	if raw, ok := jsonscan.Decode(data, MaxDepth); ok {
		return Parsed{Object: raw, noKeyTwice: true}, nil
	}
	if err := checkDepth(data); err != nil {
		return Parsed{}, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw map[string]any
	if err := dec.Decode(&raw); err != nil {
		return Parsed{}, fmt.Errorf("not a JSON object: %w", err)
	}
	return Parsed{Object: raw}, nil
}

// readDecoded is readTemplate of a template decoded already: nested no
// deeper than readTemplate allows.
func readDecoded(raw map[string]any) (*template, error) {
	if tooDeep(raw, MaxDepth) {
		return nil, fmt.Errorf("nested more than %d levels deep: not a Pod template", MaxDepth)
	}
	return templateOf(raw, nil, false)
}

// templateOf reads a Pod template decoded as readTemplate decodes it.
// specJSON, when not nil, gives its spec's JSON as it was read;
// noKeyTwice says that no key came twice in that JSON.
func templateOf(raw map[string]any, specJSON func() []byte, noKeyTwice bool) (*template, error) {
	t := &template{raw: raw}
	meta, state, err := member(raw, "metadata")
	if err != nil {
		return nil, err
	}
	t.metadata = state
	if meta != nil {
		ann, state, err := member(meta, "annotations")
		if err != nil {
			return nil, fmt.Errorf("metadata.%w", err)
		}
		t.annState = state
		if ann != nil {
			t.annotations = map[string]string{}
			for k, v := range ann {
				s, ok := v.(string)
				if !ok {
					return nil, fmt.Errorf("metadata.annotations.%s must be a string: quote it", k)
				}
				t.annotations[k] = s
			}
		}
	}
	spec, state, err := member(raw, "spec")
	if err != nil {
		return nil, err
	}
	if state != present {
		return nil, errors.New("spec is missing or null")
	}
	t.rawSpec = spec
	// The PodSpec is read from the spec decoded already when typedFrom is
	// sure to read it as strict decoding would, and no key came twice in
	// the spec as it was read: Parse saw none, or its members are counted
	// against its JSON's. Without its JSON there is nothing to count: the
	// spec was decoded by a caller, and what it holds is what counts.
	n, ok := typedFrom(spec, &t.spec)
	if ok && noKeyTwice {
		return t, nil
	}
	var js []byte
	if specJSON != nil {
		js = specJSON()
	}
	if ok && (js == nil || n == colons(js)) {
		return t, nil
	}
	t.spec = corev1.PodSpec{}
	// The spec as it was read gives the same PodSpec as the spec decoded
	// and written again when strict decoding finds nothing to say: no key
	// twice (the map kept the last), no unknown field (whose errors would
	// come in another order). Otherwise, and on any error, it is decoded
	// from what the map holds, as always.
	if js != nil {
		strict, err := kjson.UnmarshalStrict(js, &t.spec, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
		if err == nil && len(strict) == 0 {
			return t, nil
		}
		t.spec = corev1.PodSpec{}
	}
	js, _ = appendValue(nil, spec)
	strict, err := kjson.UnmarshalStrict(js, &t.spec, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		return nil, fmt.Errorf("spec is not a valid PodSpec: %w", err)
	}
	if err := checkSpelling(strict); err != nil {
		return nil, err
	}
	return t, nil
}

// member reads an object member that may be absent or null.
func member(obj map[string]any, key string) (map[string]any, presence, error) {
	if state := presenceOf(obj, key); state != present {
		return nil, state, nil
	}
	m, ok := obj[key].(map[string]any)
	if !ok {
		return nil, present, fmt.Errorf("%s must be an object", key)
	}
	return m, present, nil
}

// presenceOf says whether obj[key] is absent, null or set.
func presenceOf(obj map[string]any, key string) presence {
	v, ok := obj[key]
	switch {
	case !ok:
		return absent
	case v == nil:
		return null
	}
	return present
}

// checkSpelling refuses a field that Kubernetes would ignore because its
// case differs from a real one ("Command:"): the container would run
// without what the author meant. Other unknown fields (newer than this
// build) are left to the API server.
func checkSpelling(strict []error) error {
	known := fieldNames()
	var errs []error
	for _, e := range strict {
		msg := e.Error()
		_, name, ok := strings.Cut(msg, `unknown field "`)
		if !ok {
			if strings.Contains(msg, "duplicate field") {
				errs = append(errs, fmt.Errorf("spec: %s: give each field once", msg))
			}
			continue
		}
		name = strings.TrimSuffix(name, `"`)
		path := name
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			name = name[i+1:]
		}
		if right, ok := known[strings.ToLower(name)]; ok && right != name {
			errs = append(errs, fmt.Errorf("spec.%s: Kubernetes matches field names exactly and would ignore this one: write %q", path, right))
		}
	}
	return errors.Join(errs...)
}

// fieldNames maps the lower-case spelling of every field of a Pod template
// to its right spelling.
var fieldNames = sync.OnceValue(func() map[string]string {
	names := map[string]string{}
	seen := map[reflect.Type]bool{}
	var walk func(reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name != "" && name != "-" {
				names[strings.ToLower(name)] = name
			}
			walk(f.Type)
		}
	}
	walk(reflect.TypeFor[corev1.PodTemplateSpec]())
	return names
})

// memberBytes is the JSON of the value of key in the object data starts
// with, as written (the last, if key is there more than once, as a
// decoder keeps it); nil when it is not there or when data is not what it
// expects. Where readTemplate cannot take the PodSpec from the tree
// (typedFrom), it decodes the spec from these bytes instead of writing
// the spec it decoded again.
func memberBytes(data []byte, key string) []byte {
	s := jsonscan.New(bytes.NewReader(data), 512)
	if s.Peek() != '{' {
		return nil
	}
	from, to := -1, -1
	s.Object(func(k string) error {
		if k != key {
			s.Skip()
			return s.Err()
		}
		s.Peek()
		from = s.Offset()
		s.Skip()
		to = s.Offset()
		return s.Err()
	})
	if s.Err() != nil || from < 0 {
		return nil
	}
	return data[from:to]
}
