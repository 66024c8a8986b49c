package webhook

import (
	"encoding/json"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// Operation is one JSON Patch (RFC 6902) operation.
type Operation struct {
	Op    string
	Path  string
	Value any
}

// MarshalJSON writes value for add and replace even when it is null.
func (o Operation) MarshalJSON() ([]byte, error) {
	if o.Op == "remove" {
		return json.Marshal(struct {
			Op   string `json:"op"`
			Path string `json:"path"`
		}{o.Op, o.Path})
	}
	return json.Marshal(struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}{o.Op, o.Path, o.Value})
}

// Diff returns the patch that turns old into new (both JSON of the same
// Go type): only what differs, so fields the typed decoding dropped stay
// untouched in the object the API server holds. Insertions at either end
// of a list become "add" operations, so a prepended init container does
// not rewrite the others.
func Diff(old, new []byte) ([]Operation, error) {
	var o, n any
	if err := json.Unmarshal(old, &o); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(new, &n); err != nil {
		return nil, err
	}
	var ops []Operation
	diffValue("", o, n, &ops)
	return ops, nil
}

func diffValue(path string, old, new any, ops *[]Operation) {
	if reflect.DeepEqual(old, new) {
		return
	}
	switch o := old.(type) {
	case map[string]any:
		if n, ok := new.(map[string]any); ok {
			diffMap(path, o, n, ops)
			return
		}
	case []any:
		if n, ok := new.([]any); ok {
			diffList(path, o, n, ops)
			return
		}
	}
	*ops = append(*ops, Operation{Op: "replace", Path: path, Value: new})
}

func diffMap(path string, old, new map[string]any, ops *[]Operation) {
	keys := make([]string, 0, len(old)+len(new))
	for k := range old {
		keys = append(keys, k)
	}
	for k := range new {
		if _, ok := old[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := path + "/" + escape(k)
		ov, inOld := old[k]
		nv, inNew := new[k]
		switch {
		case !inNew:
			*ops = append(*ops, Operation{Op: "remove", Path: p})
		case !inOld:
			*ops = append(*ops, Operation{Op: "add", Path: p, Value: nv})
		default:
			diffValue(p, ov, nv, ops)
		}
	}
}

func diffList(path string, old, new []any, ops *[]Operation) {
	if len(old) == len(new) {
		for i := range old {
			diffValue(path+"/"+strconv.Itoa(i), old[i], new[i], ops)
		}
		return
	}
	prefix := 0
	for prefix < len(old) && prefix < len(new) && reflect.DeepEqual(old[prefix], new[prefix]) {
		prefix++
	}
	suffix := 0
	for suffix < len(old)-prefix && suffix < len(new)-prefix && reflect.DeepEqual(old[len(old)-1-suffix], new[len(new)-1-suffix]) {
		suffix++
	}
	removed, added := old[prefix:len(old)-suffix], new[prefix:len(new)-suffix]
	switch {
	case len(removed) == 0:
		for i, v := range added {
			*ops = append(*ops, Operation{Op: "add", Path: path + "/" + strconv.Itoa(prefix+i), Value: v})
		}
	case len(added) == 0:
		for i := len(removed) - 1; i >= 0; i-- {
			*ops = append(*ops, Operation{Op: "remove", Path: path + "/" + strconv.Itoa(prefix+i)})
		}
	default:
		*ops = append(*ops, Operation{Op: "replace", Path: path, Value: new})
	}
}

// escape writes a key as a JSON Pointer token.
func escape(key string) string {
	return strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1")
}

// Anchor fits ops, computed between typed encodings, to the object the API
// server holds (raw): a typed encoding has every parent object ("metadata":
// {}), the raw object may lack one. An add or replace under a missing
// parent becomes an add of the parent holding the rest of the path; a
// remove there has nothing to remove.
func Anchor(raw []byte, ops []Operation) ([]Operation, error) {
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	return anchorIn(doc, ops), nil
}

// anchorIn is Anchor on raw decoded (all of it, or every part ops touch).
func anchorIn(doc any, ops []Operation) []Operation {
	var out []Operation
	for _, op := range ops {
		tokens := strings.Split(op.Path, "/")[1:]
		node := doc
		missing := -1
		for i, tok := range tokens[:len(tokens)-1] {
			m, ok := node.(map[string]any)
			if !ok {
				break // a list or scalar: the typed and raw shapes agree there
			}
			next, ok := m[unescape(tok)]
			if !ok || next == nil {
				missing = i
				break
			}
			node = next
		}
		if missing < 0 {
			out = append(out, op)
			continue
		}
		if op.Op == "remove" {
			continue
		}
		value := op.Value
		for i := len(tokens) - 1; i > missing; i-- {
			value = map[string]any{unescape(tokens[i]): value}
		}
		out = append(out, Operation{Op: "add", Path: "/" + strings.Join(tokens[:missing+1], "/"), Value: value})
	}
	return out
}

func unescape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
}
