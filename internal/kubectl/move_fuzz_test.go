package kubectl

import (
	"errors"
	"strings"
	"testing"

	"github.com/job-signal/job-signal/inject"
)

// moveOutcome is what moving a layout's sidecar to initContainers and
// back gave.
type moveOutcome int

const (
	moveSkipped moveOutcome = iota // nothing to move: no template, or kubectl or the editor cannot read it
	moveRefused                    // the editor refused the move
	moveOneWay                     // moved, but the moves back do not give the input (verify refuses it)
	moveExact                      // moved, and back byte for byte
)

// moveBack moves the container "proxy" of every template of input to
// initContainers (the native form's ops, by hand), with fields added on
// its new path, and back. A result that does not read as the ops say is
// a failure (a wrong file); a refusal is not, nor are moves back that do
// not give the input (verify turns that into a refusal).
func moveBack(t *testing.T, input string, adds inject.Fields) moveOutcome {
	t.Helper()
	docs, err := readDocuments(strings.NewReader(input))
	if err != nil {
		return moveSkipped
	}
	outcome := moveSkipped
	for _, d := range docs {
		v, err := decode(d, true)
		if err != nil || v == nil {
			continue
		}
		templates, _, err := findTemplates(d, v, "", "", "")
		if err != nil || len(templates) != 1 {
			continue
		}
		if root, err := parseDocument(d); err != nil || root == nil {
			continue
		}
		tp := templates[0]
		proxy := -1
		for i, c := range tp.obj["spec"].(map[string]any)["containers"].([]any) {
			if m, ok := c.(map[string]any); ok && m["name"] == "proxy" {
				proxy = i
			}
		}
		if proxy < 0 {
			continue
		}
		fwd, back := nativeOps(t, tp.obj, []sidecarMove{{proxy, adds}})
		moved, kept, err := editDoc(t, d, inject.Prefixed(tp.prefix, fwd))
		if err != nil {
			if !errors.Is(err, errCannotEdit) {
				t.Fatalf("a refusal that names no layout: %v\n--- input\n%q", err, input)
			}
			return moveRefused
		}
		out := &document{index: d.index, line: d.line, raw: moved, json: d.json}
		if root, err := parseDocument(out); err != nil || root == nil {
			t.Fatalf("the editor cannot read what it wrote: %v\n--- input\n%q\n--- moved\n%q", err, input, moved)
		}
		again, _, err := editDoc(t, out, inject.Prefixed(tp.prefix, back(kept)))
		if err != nil || again != d.raw {
			return moveOneWay
		}
		outcome = moveExact
	}
	return outcome
}

// FuzzMoveLayouts: the layouts of FuzzInjectLayouts with the sidecar
// moved to initContainers as the native form moves it, fields added on
// its new path: the result reads as the ops say, or the move is refused.
func FuzzMoveLayouts(f *testing.F) {
	for i := range uint64(96) {
		f.Add(i*0x9e3779b97f4a7c15, "echo hi")
	}
	f.Add(uint64(0), "a: b # c")
	f.Add(uint64(1), "line one\nline two\n")
	f.Fuzz(func(t *testing.T, choices uint64, word string) {
		adds := inject.Fields{always}
		if choices%3 == 0 {
			adds = append(adds, startup)
		}
		if choices%5 == 0 {
			adds = append(adds, preStop)
		}
		moveBack(t, layout(choices, word), adds)
	})
}

// TestMoveLayouts: over many layouts, the moves are made and undone
// byte for byte on most of them (the rest are refusals, never wrong
// files); the counts are logged.
func TestMoveLayouts(t *testing.T) {
	counts := map[moveOutcome]int{}
	for i := range uint64(3000) {
		counts[moveBack(t, layout(i*0x9e3779b97f4a7c15, "echo hi"), inject.Fields{always, startup})]++
	}
	t.Logf("of 3000 layouts: %d moved and back byte for byte, %d moved one way only, %d refused, %d skipped",
		counts[moveExact], counts[moveOneWay], counts[moveRefused], counts[moveSkipped])
	if tried := 3000 - counts[moveSkipped]; counts[moveExact] < tried*95/100 {
		t.Errorf("only %d of %d layouts moved and back byte for byte", counts[moveExact], tried)
	}
}
