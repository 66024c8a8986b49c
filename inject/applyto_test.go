package inject

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
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

// checkAsApply: where applyTo applies ops, it gives what Apply gives,
// read back; where Apply fails, applyTo leaves the ops to it; and the
// document it was given is left as it was.
func checkAsApply(t *testing.T, data []byte, ops []Op) (applied bool) {
	t.Helper()
	doc := decodeDoc(t, data)
	before := copyJSON(doc)
	got, err := applyTo(doc, ops)
	if !reflect.DeepEqual(doc, before) {
		t.Fatalf("applyTo changed the document it was given")
	}
	want, applyErr := Apply(data, ops)
	decoded, decodedErr := ApplyDecoded(before, ops)
	if (decodedErr != nil) != (applyErr != nil) || applyErr == nil && !reflect.DeepEqual(decoded, any(decodeDoc(t, want))) {
		t.Fatalf("ops %v: ApplyDecoded gives %v (%v), Apply %s (%v)", ops, decoded, decodedErr, want, applyErr)
	}
	switch {
	case applyErr != nil && err == nil:
		t.Fatalf("Apply fails (%v), applyTo applied %v", applyErr, ops)
	case err != nil:
		return false
	}
	if w := decodeDoc(t, want); !reflect.DeepEqual(got, w) {
		g, _ := json.Marshal(got)
		t.Fatalf("ops %v:\napplyTo %s\nApply   %s", ops, g, want)
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

// TestApplyToAsApply holds applyTo to Apply on what inject applies it to:
// for each shape of testdata/shapes, undoing its injection, and undoing
// and injecting again with a changed annotation; and on ops it leaves to
// Apply.
func TestApplyToAsApply(t *testing.T) {
	n := 0
	for _, sh := range injectableShapes(t) {
		in, data := sh.name, sh.data
		if !checkAsApply(t, data, sh.ops) {
			t.Fatalf("%s: applyTo left inject's ops to Apply", in)
		}
		injected, _ := Apply(data, sh.ops)
		again, err := Prepare(injected)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if !checkAsApply(t, injected, again.undo) {
			t.Fatalf("%s: applyTo left the undo to Apply", in)
		}
		redo, _, err := injectOps(again.orig, again.p, sh.images, again.known, again.text, "ghcr.io/job-signal/job-signal:v1", choice{}, again.imageStop)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		changes := append(keepLayout(again.undo), keepLayout(redo)...)
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
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) { checkAsApply(t, doc, ops) })
	}
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
