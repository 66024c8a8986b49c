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

// peekKeep notes, before op is applied, the source text it will replace.
func (ed *editor) peekKeep(op inject.Op) {
	tokens := inject.Tokens(op.Path)
	if op.Keep == "" || len(tokens) == 0 || op.Op != "add" && op.Op != "replace" {
		return
	}
	if m, err := ed.resolve(tokens[:len(tokens)-1]); err == nil && m.kind == mapKind {
		if i := m.index(tokens[len(tokens)-1]); i >= 0 {
			ed.keep(op.Keep, m, m.items[i])
		}
	}
}

// keep notes the source text of a member's value about to be replaced
// unless writing the value back gives the same bytes.
func (ed *editor) keep(place string, m *node, it *item) {
	if place == "" || it.val.at < 0 || it.at < 0 {
		return
	}
	text := strings.TrimSuffix(it.val.text, trailing(it.val))
	if v, err := meaning(it.val); err == nil && ed.render(m, v) != text {
		ed.kept[place] = ed.format + text
	}
}

// keyLike writes key quoted as the key was: renaming "command" gives
// "args", and renaming it back gives "command" again.
func (ed *editor) keyLike(was, key string) string {
	switch {
	case ed.st.json:
	case strings.HasPrefix(was, `"`):
		return strconv.Quote(key)
	case strings.HasPrefix(was, "'") && !strings.Contains(key, "'") && printable(key):
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
func (ed *editor) remember(old *node) {
	if old.at < 0 || old.kind != seqKind {
		return
	}
	for _, it := range old.items {
		w := it.val
		if w.kind != scalarKind || w.at < 0 || w.y != nil && w.y.ShortTag() != "!!str" || w.y == nil && !strings.HasPrefix(w.text, `"`) {
			continue
		}
		mw := movedWord{value: w.str, text: ed.text[w.at:w.end], col: ed.column(it.at)}
		if w.y != nil {
			mw.style = w.y.Style
		}
		ed.moved = append(ed.moved, mw)
	}
}

// movedText is the source text of a moved word v for a new item of a
// list (flow, or block with its '-' at col), when it can stand there.
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
		w.text = ed.st.shift(w.text, col-w.col)
	}
	ed.moved = slices.Delete(ed.moved, i, i+1)
	return w.text, true
}
