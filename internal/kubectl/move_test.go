package kubectl

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/job-signal/job-signal/inject"
)

// sidecarMove is one sidecar that goes to initContainers: its index in
// containers as written, and the fields added on its new path.
type sidecarMove struct {
	index int
	adds  inject.Fields
}

// nativeOps writes the ops of the native form (the shared design's
// order) for the template obj with sidecars in start order, by hand:
// the editor is tested on them before inject writes them. back gives the
// reverse, as uninject writes it, given the texts the editor kept.
func nativeOps(t *testing.T, obj map[string]any, sidecars []sidecarMove) (fwd []inject.Op, back func(kept map[string]string) []inject.Op) {
	t.Helper()
	spec := obj["spec"].(map[string]any)
	var names []string
	for _, c := range spec["containers"].([]any) {
		names = append(names, c.(map[string]any)["name"].(string))
	}
	was, own := "", 0
	switch init, there := spec["initContainers"]; {
	case !there:
		was = "absent"
	case init == nil:
		was = "null"
	default:
		own = len(init.([]any))
	}
	if was != "" {
		fwd = append(fwd, inject.Op{Op: "add", Path: "/spec/initContainers", Value: []any{}, Keep: "initContainers"})
	}
	current := slices.Clone(names)
	var moved []string
	for _, s := range sidecars {
		i := slices.Index(current, names[s.index])
		fwd = append(fwd, inject.Op{Op: "move", From: inject.Pointer("spec", "containers", strconv.Itoa(i)), Path: "/spec/initContainers/-"})
		current = slices.Delete(current, i, i+1)
		moved = append(moved, names[s.index])
	}
	at := func(k int, key string) string {
		return inject.Pointer("spec", "initContainers", strconv.Itoa(own+k), key)
	}
	for k, s := range sidecars {
		for _, f := range s.adds {
			fwd = append(fwd, inject.Op{Op: "add", Path: at(k, f.Key), Value: f.Value})
		}
	}
	back = func(kept map[string]string) []inject.Op {
		var ops []inject.Op
		for k := len(sidecars) - 1; k >= 0; k-- {
			for f := len(sidecars[k].adds) - 1; f >= 0; f-- {
				ops = append(ops, inject.Op{Op: "remove", Path: at(k, sidecars[k].adds[f].Key)})
			}
		}
		order := slices.Clone(sidecars)
		slices.SortFunc(order, func(a, b sidecarMove) int { return a.index - b.index })
		init := slices.Clone(moved)
		for _, s := range order {
			i := slices.Index(init, names[s.index])
			ops = append(ops, inject.Op{Op: "move", From: inject.Pointer("spec", "initContainers", strconv.Itoa(own+i)), Path: inject.Pointer("spec", "containers", strconv.Itoa(s.index))})
			init = slices.Delete(init, i, i+1)
		}
		switch was {
		case "absent":
			ops = append(ops, inject.Op{Op: "remove", Path: "/spec/initContainers"})
		case "null":
			ops = append(ops, inject.Op{Op: "replace", Path: "/spec/initContainers", Value: nil, Text: kept["initContainers"]})
		}
		return ops
	}
	return fwd, back
}

// editDoc applies ops to the document d with the plugin's editor and
// checks what verify checks: the result reads as the ops applied to what
// d reads. It returns the text and the source texts the editor kept.
func editDoc(t *testing.T, d *document, ops []inject.Op) (string, map[string]string, error) {
	t.Helper()
	v, err := decode(d, true)
	if err != nil {
		t.Fatal(err)
	}
	root, err := parseDocument(d)
	if err != nil {
		t.Fatal(err)
	}
	ed := newEditor(d, root)
	for _, op := range ops {
		if err := ed.apply(op); err != nil {
			return "", nil, err
		}
	}
	text := ed.finish()
	want, err := inject.ApplyDecoded(v, ops)
	if err != nil {
		t.Fatalf("the ops do not apply: %v", err)
	}
	got, err := decode(&document{index: d.index, line: d.line, raw: text, json: d.json}, true)
	if err != nil {
		t.Fatalf("the result does not read back: %v\n%s", err, text)
	}
	if at, differ := difference(want, got); differ {
		t.Fatalf("the result reads differently at %s:\n%s", at, text)
	}
	return text, ed.kept, nil
}

// checkMoves moves sidecars of the one template in input to
// initContainers and back, and returns the moved text; back must give
// the input byte for byte.
func checkMoves(t *testing.T, input string, sidecars []sidecarMove) (string, error) {
	t.Helper()
	docs, err := readDocuments(strings.NewReader(input))
	if err != nil || len(docs) != 1 {
		t.Fatalf("%d documents: %v", len(docs), err)
	}
	d := docs[0]
	v, err := decode(d, true)
	if err != nil {
		t.Fatal(err)
	}
	templates, _, err := findTemplates(d, v, "", "", "")
	if err != nil || len(templates) != 1 {
		t.Fatalf("%d templates: %v", len(templates), err)
	}
	fwd, back := nativeOps(t, templates[0].obj, sidecars)
	moved, kept, err := editDoc(t, d, inject.Prefixed(templates[0].prefix, fwd))
	if err != nil {
		return "", err
	}
	out := &document{index: 1, line: d.line, raw: moved, json: d.json}
	again, _, err := editDoc(t, out, inject.Prefixed(templates[0].prefix, back(kept)))
	if err != nil {
		t.Fatalf("moving back: %v\n%s", err, moved)
	}
	if again != d.raw {
		t.Fatalf("moving back does not give the input (line %d differs):\n%s", firstDifferentLine(again, d.raw), again)
	}
	return d.sep + moved, nil
}

var (
	always    = inject.Field{Key: "restartPolicy", Value: "Always"}
	startup   = inject.Field{Key: "startupProbe", Value: inject.Fields{{Key: "httpGet", Value: inject.Fields{{Key: "path", Value: "/ready"}, {Key: "port", Value: 9901}}}, {Key: "periodSeconds", Value: 1}}}
	preStop   = inject.Field{Key: "lifecycle", Value: inject.Fields{{Key: "preStop", Value: inject.Fields{{Key: "httpGet", Value: inject.Fields{{Key: "path", Value: "/quitquitquit"}, {Key: "port", Value: 9091}}}}}}}
	moveCases = []struct {
		input    string
		sidecars []sidecarMove
	}{
		{"../shapes/proxy-first.yaml", []sidecarMove{{0, inject.Fields{always, preStop}}}},
		{"../shapes/get-o-json.json", []sidecarMove{{1, inject.Fields{always}}}},
		{"../shapes/flow-yaml.yaml", []sidecarMove{{1, inject.Fields{always}}}},
		{"../shapes/istio-crlf.yaml", []sidecarMove{{1, inject.Fields{always, startup}}}},
		{"own-init-two-sidecars.yaml", []sidecarMove{{0, inject.Fields{always, startup}}, {2, inject.Fields{always}}}},
		{"null-init-crlf.yaml", []sidecarMove{{1, inject.Fields{always}}}},
		{"null-init-no-final-newline.yaml", []sidecarMove{{1, inject.Fields{always, preStop}}}},
		{"one-line.json", []sidecarMove{{0, inject.Fields{always, startup}}}},
		{"flow-items-block-list.yaml", []sidecarMove{{1, inject.Fields{always}}}},
	}
)

// TestMoves: sidecars moved from containers to initContainers (the native
// form) keep their source text, comments and layout, re-indented to their
// new list, with the fields added on their new path; the result reads as
// the ops say, and the moves back give the input byte for byte. Goldens
// in testdata/moves (-update rewrites them).
func TestMoves(t *testing.T) {
	for _, tc := range moveCases {
		name := strings.TrimSuffix(filepath.Base(tc.input), filepath.Ext(tc.input))
		t.Run(name, func(t *testing.T) {
			input, err := os.ReadFile(filepath.Join("testdata/moves", tc.input))
			if err != nil {
				t.Fatal(err)
			}
			moved, err := checkMoves(t, string(input), tc.sidecars)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata/moves", name+".native"+filepath.Ext(tc.input)), moved)
		})
	}
}
