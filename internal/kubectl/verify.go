package kubectl

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/job-signal/job-signal/inject"
)

// editDocument writes a document's changes into its bytes and verifies
// them: "", false when it has none.
func editDocument(p *parsed, injecting bool) (string, bool, error) {
	if !p.changes() {
		return "", false, nil
	}
	text, err := applyAll(p)
	if err == nil {
		err = verify(p, text, injecting)
	}
	return text, err == nil, err
}

// verify reads an edited document back as kubectl does and refuses it
// unless it means what inject's ops make of the input's meaning and, when
// injecting, uninject gives the input back byte for byte: a layout the
// editor gets wrong is a refusal, never a wrong file.
func verify(p *parsed, text string, injecting bool) error {
	want, err := inject.ApplyDecoded(p.value, p.appliedOps())
	if err != nil {
		return fmt.Errorf("%s: %w", p.doc, err)
	}
	out := &document{index: p.doc.index, line: p.doc.line, sep: p.doc.sep, raw: text, json: p.doc.json}
	got, err := decode(out, true)
	if err != nil {
		return cannotEdit(p.doc, "its result would not read back: "+strings.TrimPrefix(oneLine(err), out.String()+": "))
	}
	if at, differ := difference(want, got); differ {
		return cannotEdit(p.doc, "its result would read differently at "+at)
	}
	if !injecting {
		return nil
	}
	back, undone, err := undo(out, got)
	if err != nil {
		return cannotEdit(p.doc, "uninject could not undo it: "+strings.TrimPrefix(oneLine(err), out.String()+": "))
	}
	if back != p.doc.raw {
		// An input that carries job-signal already (inject again): uninject
		// of the output must give what uninject makes of the input.
		if again, _, err := undo(p.doc, p.value); err != nil || back != again {
			return cannotEdit(p.doc, fmt.Sprintf("uninject would not give line %d back as it is", p.doc.line+firstDifferentLine(back, p.doc.raw)-1))
		}
		return nil
	}
	// As uninject checks its own result: the input must mean what its ops
	// make of the output's meaning.
	if want, err := inject.ApplyDecoded(got, undone); err != nil {
		return cannotEdit(p.doc, "uninject could not undo it: "+oneLine(err))
	} else if at, differ := difference(want, p.value); differ {
		return cannotEdit(p.doc, "uninject would refuse to undo it: the input would read differently at "+at)
	}
	return nil
}

// appliedOps are the ops the editor applied to the document.
func (p *parsed) appliedOps() []inject.Op {
	var ops []inject.Op
	for _, pd := range p.pods {
		ops = append(ops, pd.applied...)
	}
	return ops
}

// cannotEdit is the one-line refusal of a layout the editor gets wrong.
func cannotEdit(d *document, why string) error {
	layout := "block style"
	if d.json {
		layout = "the layout of kubectl get -o json"
	}
	return fmt.Errorf("%s: inject cannot edit this layout (%s); nothing was written: write command, args and the lists inject adds to (volumes, volumeMounts, initContainers) in %s", d, why, layout)
}

// undo is uninject of a document whose meaning is v, and its ops.
func undo(d *document, v any) (string, []inject.Op, error) {
	p, _, err := parseDecoded(d, v, nil)
	if err != nil || p == nil || !p.changes() {
		return d.raw, nil, err
	}
	text, err := applyAll(p)
	return text, p.appliedOps(), err
}

// changes says whether any template of the document has ops.
func (p *parsed) changes() bool {
	return slices.ContainsFunc(p.pods, func(pd *pod) bool { return len(pd.ops) > 0 })
}

// difference finds where two decoded values differ, as a JSON Pointer
// (built only on the way out of a difference). Numbers are equal when
// their values are.
func difference(a, b any) (string, bool) {
	path, differ := differs(a, b)
	return orRoot(path), differ
}

func differs(a, b any) (string, bool) {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return "", true
		}
		first, where, found := "", "", false // the first key that differs, in order
		for k, va := range a {
			vb, ok := b[k]
			if !ok {
				return "", true
			}
			if w, differ := differs(va, vb); differ && (!found || k < first) {
				first, where, found = k, inject.Pointer(k)+w, true
			}
		}
		return where, found
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return "", true
		}
		for i := range a {
			if where, differ := differs(a[i], b[i]); differ {
				return "/" + strconv.Itoa(i) + where, true
			}
		}
		return "", false
	case json.Number:
		b, ok := b.(json.Number)
		return "", !ok || !sameNumber(a, b)
	}
	return "", a != b
}

func orRoot(at string) string {
	if at == "" {
		return "the top level"
	}
	return at
}

func sameNumber(a, b json.Number) bool {
	if a == b {
		return true
	}
	x, okx := new(big.Float).SetString(string(a))
	y, oky := new(big.Float).SetString(string(b))
	return okx && oky && x.Cmp(y) == 0
}

// firstDifferentLine is the 1-based line where a and b first differ.
func firstDifferentLine(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return 1 + strings.Count(a[:n], "\n")
}

// oneLine keeps an error to one line.
func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }
