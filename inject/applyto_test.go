// ApplyDecoded held to the API server's JSON Patch library, case by case and by fuzzing: long because the table of
// RFC 6902 corner cases is the point.

package inject

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
)

// decodeDoc reads JSON as readTemplate does.
func decodeDoc(t *testing.T, b []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return doc
}

// apiServerApply applies ops as the API server applies the webhook's JSON
// Patch: the patch Patch writes, by gopkg.in/evanphx/json-patch.v4.
func apiServerApply(doc []byte, ops []Op) ([]byte, error) {
	raw, err := Patch(ops)
	if err != nil {
		return nil, err
	}
	p, err := jsonpatch.DecodePatch(raw)
	if err != nil {
		return nil, err
	}
	return p.Apply(doc)
}

// checkAsApply: ApplyDecoded (applyTo's applier) gives what the API
// server makes of ops (read back), and fails where it fails; Apply, on
// the JSON, gives the same; the document it was given is left as it was. It says whether the
// ops applied.
func checkAsApply(t *testing.T, data []byte, ops []Op) (applied bool) {
	t.Helper()
	doc := decodeDoc(t, data)
	before := copyJSON(doc)
	got, err := ApplyDecoded(doc, ops)
	if !reflect.DeepEqual(doc, before) {
		t.Fatalf("ApplyDecoded changed the document it was given")
	}
	want, refErr := apiServerApply(data, ops)
	js, jsErr := Apply(data, ops)
	if (jsErr != nil) != (err != nil) || err == nil && !reflect.DeepEqual(got, decodeAny(t, js)) {
		t.Fatalf("ops %v: Apply gives %s (%v), ApplyDecoded %v (%v)", ops, js, jsErr, got, err)
	}
	switch {
	case refErr != nil && err == nil:
		t.Fatalf("the API server fails (%v), ApplyDecoded applied %v", refErr, ops)
	case refErr == nil && err != nil:
		t.Fatalf("the API server applies %v, ApplyDecoded fails: %v", ops, err)
	case err != nil:
		return false
	}
	if w := decodeAny(t, want); !reflect.DeepEqual(got, w) {
		g, _ := json.Marshal(got)
		t.Fatalf("ops %v:\nApplyDecoded   %s\nthe API server %s", ops, g, want)
	}
	if sameJSON(doc, got) != mustEqualJSON(t, data, want) {
		t.Fatalf("sameJSON and equalJSON disagree on ops %v", ops)
	}
	return true
}

func must(doc map[string]any, err error) map[string]any {
	if err != nil {
		panic(err)
	}
	return doc
}

func mustEqualJSON(t *testing.T, a, b []byte) bool {
	same, err := equalJSON(a, b)
	return err == nil && same
}

// TestApplyToAsApply holds applyTo to the API server on what inject
// applies it to: for each shape of testdata/shapes, undoing its injection,
// and undoing and injecting again with a changed annotation; and on a
// table of ops, RFC 6902's corners among them, that apply or fail.
func TestApplyToAsApply(t *testing.T) {
	n := 0
	for _, sh := range injectableShapes(t) {
		in, data := sh.name, sh.data
		if !checkAsApply(t, data, sh.ops) {
			t.Fatalf("%s: inject's ops do not apply", in)
		}
		injected, _ := Apply(data, sh.ops)
		again, err := Prepare(injected)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if !checkAsApply(t, injected, again.prev.ops) {
			t.Fatalf("%s: the undo does not apply", in)
		}
		redo, _, err := again.injectOps(sh.images, "ghcr.io/job-signal/job-signal:v1", choice{})
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		changes := slices.DeleteFunc(slices.Concat(again.prev.ops, redo), func(o Op) bool { return o.layout })
		if !checkAsApply(t, injected, changes) || !sameJSON(decodeDoc(t, injected), must(applyTo(decodeDoc(t, injected), changes))) {
			t.Fatalf("%s: injecting again is not seen as no change", in)
		}
		// The same Pod, its settings changed after injection: injecting
		// again changes it.
		edited := decodeDoc(t, injected)
		meta, _ := edited["metadata"].(map[string]any)
		ann, _ := meta["annotations"].(map[string]any)
		ann[AnnotationDefaultContainer] = "no-such-container"
		ann["example.com/<other>"] = "x & y"
		editedJSON, _ := json.Marshal(edited)
		if plan, err := Prepare(editedJSON); err == nil {
			if res, err := plan.Inject(sh.images, "ghcr.io/job-signal/job-signal:v2"); err == nil {
				checkAsApply(t, editedJSON, res.Ops)
			}
		}
		n++
	}
	if n < 10 {
		t.Fatalf("only %d shapes checked", n)
	}

	doc := []byte(`{"metadata":{"annotations":{"a/b":"1","c~d":"2"},"n":null},"spec":{"l":[1,2.50,3],"m":[{"name":"a"}],"o":{"k":"v"},"s":"x","big":1e400}}`)
	for i, ops := range [][]Op{
		{{Op: "add", Path: "/spec/l/3", Value: "end"}},
		{{Op: "add", Path: "/spec/l/4", Value: "past the end"}},
		{{Op: "add", Path: "/spec/l/-", Value: Fields{{"k", []string{"a", "b"}}}}},
		{{Op: "add", Path: "/spec/o/f", Value: Fields{{"k", "first"}, {"n", Fields{{"b", true}, {"z", nil}}}, {"k", "last"}}}},
		{{Op: "add", Path: "/spec/o/f", Value: Fields{{"n", 1}, {"x", json.Number("2.50")}, {"e", Fields{}}, {"l", []any{"a", Fields{{"b", "c"}}}}}}},
		{{Op: "add", Path: "/spec/o/f", Value: Fields{{"\xff", "key not UTF-8"}, {"s", "\xfe"}}}},
		{{Op: "add", Path: "/spec/o/f", Value: Fields(nil)}},
		{{Op: "add", Path: "/spec/l/-1", Value: "negative"}},
		{{Op: "add", Path: "/spec/l/x", Value: "not an index"}},
		{{Op: "add", Path: "/spec/l/0", Value: nil}},
		{{Op: "remove", Path: "/spec/l/2"}},
		{{Op: "remove", Path: "/spec/l/3"}},
		{{Op: "remove", Path: "/spec/missing"}},
		{{Op: "remove", Path: "/metadata/annotations/a~1b"}},
		{{Op: "remove", Path: "/metadata/annotations/c~0d"}},
		{{Op: "replace", Path: "/spec/l/1", Value: json.Number("2.5")}},
		{{Op: "replace", Path: "/spec/l/3", Value: 1}},
		{{Op: "replace", Path: "/spec/new", Value: "replace adds a member"}},
		{{Op: "replace", Path: "/spec/o", Value: map[string]any{"k": "v"}}},
		{{Op: "move", From: "/spec/s", Path: "/spec/t"}},
		{{Op: "move", From: "/spec/missing", Path: "/spec/t"}},
		{{Op: "move", From: "/spec/l/0", Path: "/spec/o/first"}},
		{{Op: "move", From: "/spec/l/0", Path: "/spec/missing/-"}},
		{{Op: "move", From: "/spec/l/9", Path: "/spec/m/-"}},
		{{Op: "move", From: "/spec/o", Path: "/spec/o/inside"}},
		{{Op: "move", From: "/spec/m/0", Path: "/spec/m/0/k"}},
		{{Op: "add", Path: "/metadata/n/x", Value: "under null"}},
		{{Op: "add", Path: "/spec/s/x", Value: "under a string"}},
		{{Op: "add", Path: "/nowhere/x", Value: "under nothing"}},
		{{Op: "add", Path: "", Value: map[string]any{}}},
		{{Op: "copy", From: "/spec/s", Path: "/spec/t"}},
		{{Op: "add", Path: "/spec/bad", Value: "\xff"}},
		{{Op: "add", Path: "/spec/bad", Value: []string{"ok", "\xff"}}},
		{{Op: "add", Path: "/spec/o/k", Value: "v"}, {Op: "remove", Path: "/spec/x"}},
		{{Op: "add", Path: "/spec/o/k", Value: "v"}}, // no change, but a number out of range: never the same
		// Indices as the API server reads them: negative ones count from
		// the end (for add, "-1" is the end), "-" is not an item, leading
		// zeros and signs as strconv.Atoi reads them.
		{{Op: "add", Path: "/spec/l/-1", Value: "at the end"}},
		{{Op: "add", Path: "/spec/l/-4", Value: "first"}},
		{{Op: "add", Path: "/spec/l/-5", Value: "before the first"}},
		{{Op: "remove", Path: "/spec/l/-1"}},
		{{Op: "remove", Path: "/spec/l/-3"}},
		{{Op: "remove", Path: "/spec/l/-4"}},
		{{Op: "replace", Path: "/spec/l/-2", Value: "second"}},
		{{Op: "replace", Path: "/spec/l/-", Value: "not an item"}},
		{{Op: "remove", Path: "/spec/l/-"}},
		{{Op: "move", From: "/spec/l/-1", Path: "/spec/m/-1"}},
		{{Op: "add", Path: "/spec/m/-1/k", Value: "through a negative index"}},
		{{Op: "add", Path: "/spec/m/-/k", Value: "through -"}},
		{{Op: "add", Path: "/spec/m/01/k", Value: "leading zero"}},
		{{Op: "add", Path: "/spec/l/+1", Value: "a sign"}},
		{{Op: "add", Path: "/spec/l/01", Value: "a leading zero"}},
		// Pointers: escapes, the empty key, the whole document.
		{{Op: "add", Path: "/metadata/annotations/a~01", Value: "~ then 1"}},
		{{Op: "add", Path: "/metadata/annotations/~1~0", Value: "/~"}},
		{{Op: "add", Path: "/spec/o/", Value: "the empty key"}},
		{{Op: "add", Path: "/spec/o/-", Value: "- is a key in an object"}},
		{{Op: "replace", Path: "", Value: map[string]any{"whole": "document"}}},
		{{Op: "replace", Path: "", Value: []any{"a list"}}},
		{{Op: "replace", Path: "", Value: "a string"}},
		{{Op: "remove", Path: ""}},
		{{Op: "move", From: "", Path: "/spec/x"}},
		{{Op: "move", From: "/spec/s", Path: ""}},
		// Null: a value, never a container on the way.
		{{Op: "move", From: "/metadata/n", Path: "/spec/n"}},
		{{Op: "remove", Path: "/metadata/n"}},
		{{Op: "add", Path: "/spec/l/0", Value: nil}, {Op: "add", Path: "/spec/l/0/x", Value: "under a null item"}},
		{{Op: "add", Path: "/spec/n", Value: nil}, {Op: "add", Path: "/spec/n/x", Value: "under an added null"}},
		{{Op: "add", Path: "/spec/s/0", Value: "into a string"}},
		{{Op: "add", Path: "/spec/l/0/x", Value: "into a number"}},
		// Later ops see what earlier ones did, not the input.
		{{Op: "add", Path: "/spec/new", Value: Fields{{"l", []any{}}}}, {Op: "add", Path: "/spec/new/l/-", Value: "x"}, {Op: "move", From: "/spec/new", Path: "/metadata/moved"}, {Op: "add", Path: "/metadata/moved/l/0", Value: "y"}},
		{{Op: "move", From: "/spec/o", Path: "/spec/p"}, {Op: "add", Path: "/spec/o/k", Value: "gone"}},
		{{Op: "remove", Path: "/spec/l/0"}, {Op: "remove", Path: "/spec/l/0"}, {Op: "remove", Path: "/spec/l/0"}, {Op: "remove", Path: "/spec/l/0"}},
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) { checkAsApply(t, doc, ops) })
	}
	// A document that is a list.
	for i, ops := range [][]Op{
		{{Op: "add", Path: "/-", Value: "x"}},
		{{Op: "remove", Path: "/0"}},
		{{Op: "move", From: "/1/k", Path: "/0"}},
	} {
		t.Run(fmt.Sprint("list", i), func(t *testing.T) {
			data := []byte(`[1,{"k":"v"}]`)
			got, err := ApplyDecoded(copyJSON(decodeAny(t, data)), ops)
			want, refErr := apiServerApply(data, ops)
			if (err != nil) != (refErr != nil) || err == nil && !reflect.DeepEqual(got, decodeAny(t, want)) {
				t.Fatalf("%v: ApplyDecoded %v (%v), the API server %s (%v)", ops, got, err, want, refErr)
			}
		})
	}
}

// TestApplyRefuses: what applyTo refuses where the API server's library
// applies something: a pointer that does not start with "/" (the library
// reads it from its second segment), and the ops inject never writes.
func TestApplyRefuses(t *testing.T) {
	doc := []byte(`{"spec":{"s":"x","l":[1]}}`)
	for _, ops := range [][]Op{
		{{Op: "add", Path: "spec/t", Value: "x"}},
		{{Op: "remove", Path: "x/spec"}},
		{{Op: "move", From: "spec/s", Path: "/spec/t"}},
		{{Op: "copy", From: "/spec/s", Path: "/spec/t"}},
		{{Op: "test", Path: "/spec/s", Value: "x"}},
	} {
		if _, err := applyTo(decodeDoc(t, doc), ops); err == nil {
			t.Errorf("%v applied", ops)
		}
		if _, err := Apply(doc, ops); err == nil {
			t.Errorf("Apply of %v: no error", ops)
		}
	}
	for _, doc := range []string{`"a string"`, `null`, `{"a":1} {"b":2}`, `{`} {
		if _, err := Apply([]byte(doc), []Op{{Op: "remove", Path: "/a"}}); err == nil {
			t.Errorf("Apply to %s: no error", doc)
		}
	}
}

// decodeAny reads any JSON value with numbers as json.Number.
func decodeAny(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return v
}

// copyJSON is a deep copy of a decoded JSON value.
func copyJSON(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = copyJSON(e)
		}
		return out
	case []any:
		if v == nil {
			return v
		}
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = copyJSON(e)
		}
		return out
	}
	return v
}

// equalJSON compares two documents as read with encoding/json's defaults
// (numbers as float64).
func equalJSON(a, b []byte) (bool, error) {
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, &y); err != nil {
		return false, err
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb), nil
}

// FuzzApplyAsAPIServer holds ApplyDecoded to the API server's library on
// any document (an object or a list) and any patch of inject's four ops
// with pointers that start with "/" (TestApplyRefuses has the others).
func FuzzApplyAsAPIServer(f *testing.F) {
	f.Add(`{"spec":{"l":[1,{"k":null}],"o":{"a~b":"x"}}}`, `[{"op":"move","from":"/spec/l/-1","path":"/spec/o/n"},{"op":"add","path":"/spec/l/-","value":{"x":[]}}]`)
	f.Add(`[1,[2,3]]`, `[{"op":"replace","path":"/1/-2","value":null},{"op":"remove","path":"/-1"}]`)
	f.Add(`{"a":{"b":null}}`, `[{"op":"add","path":"/a/b/c","value":1},{"op":"replace","path":"","value":[]}]`)
	f.Fuzz(func(t *testing.T, doc, patch string) {
		if doc == "" || doc[0] != '{' && doc[0] != '[' {
			return // the library tells a list by its first byte
		}
		v, err := decodeJSONValue([]byte(doc))
		if err != nil {
			return
		}
		var raw []struct {
			Op, Path, From string
			Value          json.RawMessage
		}
		if json.Unmarshal([]byte(patch), &raw) != nil {
			return
		}
		var ops []Op
		for _, r := range raw {
			switch r.Op {
			case "add", "remove", "replace", "move":
			default:
				return
			}
			if r.Path != "" && r.Path[0] != '/' || r.Op == "move" && (r.From == "" || r.From[0] != '/') {
				return
			}
			var val any
			if r.Op == "add" || r.Op == "replace" {
				if r.Value == nil {
					return
				}
				if val, err = decodeJSONValue(r.Value); err != nil {
					return
				}
			}
			ops = append(ops, Op{Op: r.Op, Path: r.Path, From: r.From, Value: val})
		}
		before := copyJSON(v)
		got, err := ApplyDecoded(v, ops)
		if !reflect.DeepEqual(v, before) {
			t.Fatalf("ApplyDecoded changed the document it was given")
		}
		want, refErr := apiServerApply([]byte(doc), ops)
		if (err != nil) != (refErr != nil) {
			t.Fatalf("%s on %s: ApplyDecoded %v, the API server %v", patch, doc, err, refErr)
		}
		if err == nil {
			if w := decodeAny(t, want); !reflect.DeepEqual(got, w) {
				t.Fatalf("%s on %s:\nApplyDecoded   %v\nthe API server %v", patch, doc, got, w)
			}
		}
	})
}

// decodeJSONValue reads one JSON value, numbers as json.Number.
func decodeJSONValue(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("more after the value")
	}
	return v, nil
}
