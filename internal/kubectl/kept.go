// Source text that outlives an edit: what the record keeps so that
// uninject writes the source back as it was (values, renamed keys), and
// the words of a replaced list that go to another one.

package kubectl

import (
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/job-signal/job-signal/inject"
)

// peekKeep notes, before op is applied, the source text it will replace
// (see keep).
func (ed *editor) peekKeep(op inject.Op) {
	tokens := inject.Tokens(op.Path)
	if op.Keep == "" || len(tokens) == 0 || op.Op != "add" && op.Op != "replace" {
		return
	}
	parent, err := ed.resolve(tokens[:len(tokens)-1])
	if err != nil || parent.src == nil || parent.src.kind != mapKind {
		return
	}
	if i := parent.find(tokens[len(tokens)-1]); i >= 0 {
		ed.keep(op.Keep, parent, parent.kids[i])
	}
}

// keep notes the source text of a value about to be replaced when
// writing its value back would not give the same bytes.
func (ed *editor) keep(place string, parent *enode, e *entry) {
	if place == "" || e.val.src == nil || e.src < 0 {
		return
	}
	old := e.val.src
	v, err := meaning(ed.text, old)
	if err != nil {
		return
	}
	from, rendered := ed.replacement(v, parent.src, e.src)
	if src := ed.text[from:old.end]; rendered != src {
		ed.kept[place] = ed.format + src
	}
}

// keepKey notes the source text of a key about to be renamed when
// renaming it back would not spell it the same (escapes).
func (ed *editor) keepKey(place string, k *snode) {
	if text := ed.text[k.start:k.end]; place != "" && ed.keyLike(k, k.str) != text {
		ed.kept[place] = ed.format + text
	}
}

// keyLike writes key quoted as the source key k is: renaming "command"
// gives "args", and renaming it back gives "command" again.
func (ed *editor) keyLike(k *snode, key string) string {
	switch {
	case ed.st.json:
	case k.style&yaml.DoubleQuotedStyle != 0:
		return strconv.Quote(key)
	case k.style&yaml.SingleQuotedStyle != 0 && !strings.Contains(key, "'") && printable(key):
		return "'" + key + "'"
	}
	return ed.st.key(key)
}

type movedWord struct {
	value, text string
	style       yaml.Style
	col         int // the column of its "-" (block lists)
}

// remember notes the words of a source list about to be replaced.
func (ed *editor) remember(old *enode) {
	src := old.src
	if src == nil || src.kind != seqKind {
		return
	}
	for i, w := range src.kids {
		if w.kind != scalarKind || w.y != nil && w.y.ShortTag() != "!!str" || w.y == nil && ed.text[w.start] != '"' {
			continue
		}
		mw := movedWord{value: w.str, text: ed.text[w.start:w.end], style: w.style}
		if !src.flow {
			mw.col = ed.column(src.dash[i])
		}
		ed.moved = append(ed.moved, mw)
	}
}

// movedText is the source text of a moved word v for a new item of a
// list (flow or block at dash column col), when it can stand there.
func (ed *editor) movedText(v any, flow bool, col int) (string, bool) {
	i := slices.IndexFunc(ed.moved, func(w movedWord) bool { return v == any(w.value) })
	if i < 0 {
		return "", false
	}
	w := ed.moved[i] // the first of that word, as it stands or not at all
	switch block := w.style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0; {
	case ed.st.json:
	case flow && (block || strings.Contains(w.text, "\n") || w.style == 0 && !safePlain(w.value, true)):
		return "", false
	case block:
		w.text = ed.shift(w.text, col-w.col)
	}
	ed.moved = slices.Delete(ed.moved, i, i+1)
	return w.text, true
}
