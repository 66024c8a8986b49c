// Applying inject's ops to a tree of the document: what changes, before
// any byte is written (diff.go writes the differences).

package kubectl

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/job-signal/job-signal/inject"
)

// enode is a node of the document as the operations change it: a node of
// the source (src), or a new value to write (val, or its kept text).
type enode struct {
	src      *snode
	val      any
	text     string // kept source text to write instead of val
	hasText  bool
	expanded bool
	entries  []*entry // a mapping's, in order
	items    []*enode // a sequence's, in order
}

type entry struct {
	key     string
	src     int // index in src.keys; -1 when new
	renamed bool
	keyText string // kept source text of a renamed key
	val     *enode
}

func (e *enode) expand() {
	if e.expanded || e.src == nil {
		return
	}
	e.expanded = true
	for i, k := range e.src.keys {
		e.entries = append(e.entries, &entry{key: k.str, src: i, val: &enode{src: e.src.kids[i]}})
	}
	if e.src.kind == seqKind {
		for _, c := range e.src.kids {
			e.items = append(e.items, &enode{src: c})
		}
	}
}

// editor applies operations to one document's text.
type editor struct {
	text  string
	first int // the line of the input the text starts on
	l     *lines
	root  *enode
	st    style
	kept  map[string]string // source texts the record must keep, by place
	edits []edit
	// moved are the words of a list an op replaced, which later ops may
	// put elsewhere (a command's words going in front of args): they keep
	// their source text there.
	moved []movedWord
	// noFinalNewline: the text's last line, which has no newline, is
	// removed; the line that becomes last loses its newline.
	noFinalNewline bool
}

type movedWord struct {
	value, text string
	style       yaml.Style
	col         int // the column of its "-" (block lists)
}

type edit struct {
	start, end int
	text       string
	seq        int
}

func newEditor(d *document, root *snode) *editor {
	text := d.raw
	// Lines of the whole input: JSON documents start with the space
	// after the one before.
	first := d.line - strings.Count(text[:len(text)-len(strings.TrimLeft(text, " \t\r\n"))], "\n")
	l := newLines(text)
	return &editor{text: text, first: first, l: l, root: &enode{src: root}, st: deriveStyle(l, root, d.json), kept: map[string]string{}}
}

// lineAt is the line of the whole input that holds off.
func (ed *editor) lineAt(off int) int { return ed.first + strings.Count(ed.text[:off], "\n") }

// resolve walks tokens from the root; it expands source nodes on the way.
func (ed *editor) resolve(tokens []string) (*enode, error) {
	n := ed.root
	for _, t := range tokens {
		n.expand()
		switch {
		case n.src == nil:
			return nil, fmt.Errorf("%w: a change inside a value added by another", errCannotEdit)
		case n.src.kind == mapKind:
			e := n.find(t)
			if e == nil {
				return nil, fmt.Errorf("no member %q", t)
			}
			n = e.val
		case n.src.kind == seqKind:
			i, err := strconv.Atoi(t)
			if err != nil || i < 0 || i >= len(n.items) {
				return nil, fmt.Errorf("no item %q", t)
			}
			n = n.items[i]
		default:
			return nil, fmt.Errorf("%q: not a mapping or a list", t)
		}
	}
	n.expand()
	return n, nil
}

// keys are the member keys of a mapping, in order.
func (n *enode) keys() []string {
	keys := make([]string, len(n.entries))
	for i, e := range n.entries {
		keys[i] = e.key
	}
	return keys
}

func (n *enode) find(key string) *entry {
	for _, e := range n.entries {
		if e.key == key {
			return e
		}
	}
	return nil
}

// apply applies one operation to the tree.
func (ed *editor) apply(op inject.Op) error {
	tokens := inject.Tokens(op.Path)
	if len(tokens) == 0 {
		return fmt.Errorf("%s: the whole document cannot change", op.Path)
	}
	parent, err := ed.resolve(tokens[:len(tokens)-1])
	if err != nil {
		return fmt.Errorf("%s %s: %w", op.Op, op.Path, err)
	}
	if parent.src == nil || parent.src.kind == scalarKind {
		return fmt.Errorf("%s %s: %w", op.Op, op.Path, errCannotEdit)
	}
	last := tokens[len(tokens)-1]
	switch {
	case op.Op == "move":
		from := inject.Tokens(op.From)
		if len(from) != len(tokens) || !slices.Equal(from[:len(from)-1], tokens[:len(tokens)-1]) {
			return fmt.Errorf("move %s to %s: %w (only a rename within an object)", op.From, op.Path, errCannotEdit)
		}
		err = ed.rename(parent, op, from[len(from)-1], last)
	case op.Op != "add" && op.Op != "replace" && op.Op != "remove":
		return fmt.Errorf("unknown operation %q", op.Op)
	case parent.src.kind == mapKind:
		err = ed.applyMember(parent, op, last)
	default:
		err = ed.applyItem(parent, op, last)
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", op.Op, op.Path, err)
	}
	return nil
}

// fresh is the new value an add or replace op writes.
func (ed *editor) fresh(op inject.Op) *enode {
	n := &enode{val: op.Value}
	n.text, n.hasText = ed.textFor(op.Text)
	return n
}

// applyMember applies an add, replace or remove op to member key of the
// mapping parent.
func (ed *editor) applyMember(parent *enode, op inject.Op, key string) error {
	i := slices.IndexFunc(parent.entries, func(e *entry) bool { return e.key == key })
	switch {
	case op.Op == "remove" && i >= 0:
		parent.entries = slices.Delete(parent.entries, i, i+1)
	case op.Op == "remove" || op.Op == "replace" && i < 0:
		return errors.New("no such member")
	case i >= 0:
		e := parent.entries[i]
		ed.keep(op.Keep, parent, e)
		ed.remember(e.val)
		e.val = ed.fresh(op)
	default:
		parent.entries = slices.Insert(parent.entries, inject.FieldIndex(parent.keys(), key), &entry{key: key, src: -1, val: ed.fresh(op)})
	}
	return nil
}

// applyItem applies an add, replace or remove op to item index (or "-",
// the end) of the list parent.
func (ed *editor) applyItem(parent *enode, op inject.Op, index string) error {
	if index == "-" && op.Op == "add" {
		parent.items = append(parent.items, ed.fresh(op))
		return nil
	}
	i, err := strconv.Atoi(index)
	size := len(parent.items)
	if op.Op == "add" {
		size++
	}
	if err != nil || i < 0 || i >= size {
		return errors.New("no such index")
	}
	switch op.Op {
	case "add":
		parent.items = slices.Insert(parent.items, i, ed.fresh(op))
	case "replace":
		parent.items[i] = ed.fresh(op)
	default:
		parent.items = slices.Delete(parent.items, i, i+1)
	}
	return nil
}

// rename applies a move op within the mapping parent: member from becomes
// member to, keeping its value's text.
func (ed *editor) rename(parent *enode, op inject.Op, from, to string) error {
	e := parent.find(from)
	if parent.src.kind != mapKind || e == nil || parent.find(to) != nil {
		return fmt.Errorf("%w: a rename of a member to a new name only", errCannotEdit)
	}
	if e.src >= 0 {
		ed.keepKey(op.Keep, parent.src.keys[e.src])
	}
	e.key, e.renamed = to, true
	e.keyText, _ = ed.textFor(op.Text)
	return nil
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
	if e := parent.find(tokens[len(tokens)-1]); e != nil {
		ed.keep(op.Keep, parent, e)
	}
}

// textFor is a kept source text when it is of this document's format.
func (ed *editor) textFor(kept string) (string, bool) {
	return strings.CutPrefix(kept, ed.formatPrefix())
}

// keep notes the source text of a value about to be replaced when
// writing its value back would not give the same bytes.
func (ed *editor) keep(place string, parent *enode, e *entry) {
	if place == "" || e.val.src == nil || e.src < 0 {
		return
	}
	old := e.val.src
	block := !ed.st.json && !parent.src.flow
	from := old.start
	if block {
		from = parent.src.colon[e.src]
	}
	src := ed.text[from:old.end]
	var meaning any
	if old.kind != scalarKind || old.y == nil || old.y.ShortTag() != "!!null" {
		js, err := jsonOf(ed.text, old)
		if err != nil {
			return
		}
		meaning = decodeJSON(js)
	}
	rendered := ed.render(meaning, parent.src, e.src, old)
	if block && !strings.HasPrefix(rendered, ed.st.nl) {
		rendered = " " + rendered
	}
	if rendered == src {
		return
	}
	ed.kept[place] = ed.formatPrefix() + src
}

// keepKey notes the source text of a key about to be renamed when
// renaming it back would not spell it the same (escapes).
func (ed *editor) keepKey(place string, k *snode) {
	if text := ed.text[k.start:k.end]; place != "" && ed.keyLike(k, k.str) != text {
		ed.kept[place] = ed.formatPrefix() + text
	}
}

// formatPrefix marks a kept text with the document's format.
func (ed *editor) formatPrefix() string {
	if ed.st.json {
		return "json:"
	}
	return "yaml:"
}
