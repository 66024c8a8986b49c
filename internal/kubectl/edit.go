// inject's operations (JSON Patch: add, remove, replace, move) applied
// to a document's tree; layout.go lays out what goes in.

package kubectl

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/job-signal/job-signal/inject"
)

// editor applies operations to one document's tree.
type editor struct {
	lines
	first  int // the line of the input the text starts on
	root   *node
	st     style
	format string            // of the kept texts of this document ("yaml:", "json:")
	kept   map[string]string // source texts the record must keep, by place
	moved  []movedWord       // words of replaced lists, for later ops (kept.go)
}

func newEditor(d *document, root *node) *editor {
	text := d.raw // a JSON document starts with the spaces after the one before
	first := d.line - strings.Count(text[:len(text)-len(strings.TrimLeft(text, " \t\r\n"))], "\n")
	ed := &editor{lines: lines{text: text}, first: first, root: root, kept: map[string]string{}, format: "yaml:"}
	if d.json {
		ed.format = "json:"
	}
	ed.st = ed.deriveStyle(d.json)
	return ed
}

// finish is the document's text now.
func (ed *editor) finish() string {
	var b strings.Builder
	b.Grow(len(ed.text))
	ed.write(&b, ed.root)
	return b.String()
}

// lineAt is the line of the whole input that holds off.
func (ed *editor) lineAt(off int) int { return ed.first + strings.Count(ed.text[:off], "\n") }

// resolve walks tokens from the root, marking the nodes on the way as
// changed and, when it first comes by, compact: read on one line and
// holding something, or inside one that is.
func (ed *editor) resolve(tokens []string) (*node, error) {
	n, compact := ed.root, ed.st.single
	for i := 0; ; i++ {
		if n.at >= 0 && !n.dirty {
			n.compact = compact || !strings.Contains(n.text, "\n") && len(n.items) > 0
		}
		compact, n.dirty = n.compact, true
		if i == len(tokens) {
			return n, nil
		}
		t := tokens[i]
		j := n.index(t)
		switch {
		case n.at < 0 && n.kind == scalarKind:
			return nil, fmt.Errorf("%w: a change inside a value added by another", errCannotEdit)
		case j >= 0:
			n = n.items[j].val
		case n.kind == mapKind:
			return nil, fmt.Errorf("no member %q", t)
		case n.kind == seqKind:
			return nil, fmt.Errorf("no item %q", t)
		default:
			return nil, fmt.Errorf("%q: not a mapping or a list", t)
		}
	}
}

// apply applies one operation to the tree.
func (ed *editor) apply(op inject.Op) error {
	to, from := inject.Tokens(op.Path), inject.Tokens(op.From)
	if len(to) == 0 {
		return fmt.Errorf("%s: the whole document cannot change", op.Path)
	}
	parent, err := ed.resolve(to[:len(to)-1])
	last := to[len(to)-1]
	switch {
	case err != nil: // wrapped below, as the errors of the changes
	case op.Op == "move" && len(from) == len(to) && slices.Equal(from[:len(from)-1], to[:len(to)-1]):
		err = ed.rename(parent, op, from[len(from)-1], last)
	case op.Op == "move":
		err = ed.move(from, to, parent)
	case parent.kind == scalarKind:
		err = errCannotEdit
	case op.Op != "add" && op.Op != "replace" && op.Op != "remove":
		return fmt.Errorf("unknown operation %q", op.Op)
	case parent.kind == mapKind:
		err = ed.member(parent, op, last)
	default:
		err = ed.item(parent, op, last)
	}
	switch {
	case err == nil, errors.Is(err, errCannotEdit) && strings.HasPrefix(err.Error(), "line "):
		return err // a refusal says where it is
	case op.Op == "move":
		return fmt.Errorf("move %s to %s: %w", op.From, op.Path, err)
	}
	return fmt.Errorf("%s %s: %w", op.Op, op.Path, err)
}

// member applies an add, replace or remove op to member key of m.
func (ed *editor) member(m *node, op inject.Op, key string) error {
	i := m.index(key)
	switch {
	case op.Op == "remove" && i >= 0:
		return ed.remove(m, i)
	case op.Op == "remove" || op.Op == "replace" && i < 0:
		return errors.New("no such member")
	case i >= 0:
		it := m.items[i]
		ed.keep(op.Keep, m, it)
		ed.remember(it.val)
		it.val, it.tail = ed.fresh(m, op), trailing(it.val)+it.tail
		return nil
	}
	keys := make([]string, len(m.items))
	for i, it := range m.items {
		keys[i] = it.key
	}
	return ed.insert(m, inject.FieldIndex(keys, key), ed.newItem(m, key, ed.fresh(m, op)), nil)
}

// item applies an add, replace or remove op to item index (or "-") of l.
func (ed *editor) item(l *node, op inject.Op, index string) error {
	i, err := strconv.Atoi(index)
	if index == "-" && op.Op == "add" {
		i, err = len(l.items), nil
	}
	if err != nil || i < 0 || i > len(l.items) || i == len(l.items) && op.Op != "add" {
		return errors.New("no such index")
	}
	if op.Op != "add" {
		if err := ed.remove(l, i); err != nil || op.Op == "remove" {
			return err
		}
	}
	return ed.insert(l, i, ed.newItem(l, "", ed.fresh(l, op)), nil)
}

// rename applies a move op within the mapping m, the value's bytes kept;
// it notes the key as written unless renaming it back spells it the same.
func (ed *editor) rename(m *node, op inject.Op, from, to string) error {
	i := m.index(from)
	if m.kind != mapKind || i < 0 || m.index(to) >= 0 {
		return fmt.Errorf("%w: a rename of a member to a new name only", errCannotEdit)
	}
	it := m.items[i]
	if op.Keep != "" && it.at >= 0 && ed.keyLike(it.keyText, it.key) != it.keyText {
		ed.kept[op.Keep] = ed.format + it.keyText
	}
	text, kept := strings.CutPrefix(op.Text, ed.format)
	if !kept {
		text = ed.keyLike(it.keyText, to)
	}
	it.key, it.keyText = to, text
	return nil
}

// move moves item from of a list to path to, whose parent is target (a
// list of the source, or an empty one an op added), with its bytes and
// the lines above and under it that belong to it (relayout).
func (ed *editor) move(from, to []string, target *node) error {
	list, err := ed.resolve(from[:len(from)-1])
	if err != nil || list.kind != seqKind {
		return fmt.Errorf("%w (only a rename within an object)", errCannotEdit)
	}
	i, last := list.index(from[len(from)-1]), to[len(to)-1]
	switch {
	case i < 0:
		return fmt.Errorf("no item %q", from[len(from)-1])
	case list.items[i].at < 0:
		return fmt.Errorf("%w: a value added by another change cannot move", errCannotEdit)
	case target.at < 0 && target.kind == scalarKind:
		return fmt.Errorf("%w: the target is neither a list of the source nor an empty list just added", errCannotEdit)
	case target.kind != seqKind:
		return fmt.Errorf("%q: not a list", to[len(to)-2])
	}
	if !list.flow && target.flow && target.at >= 0 && ed.text[target.at:target.end] == "[]" {
		// A [] in block YAML becomes block lines ([] again when emptied).
		if m, err := ed.resolve(to[:len(to)-2]); err == nil && m.kind == mapKind && !m.flow {
			*target = *ed.emptyList(m)
		}
	}
	at := len(target.items)
	if last != "-" {
		if at, err = strconv.Atoi(last); err != nil || at < 0 || at > len(target.items) {
			return fmt.Errorf("no index %q", last)
		}
	}
	it, k := list.items[i], -1
	if !list.flow {
		k = above(it.lead, ed.movable(ed.column(it.at)))
	}
	ed.cut(list, i, k)
	it.lead = it.lead[max(k, 0):] // the lines above it that go with it
	if err := ed.relayout(it, list, target); err != nil {
		return err
	}
	return ed.insert(target, at, it, ed.movable(target.col))
}
