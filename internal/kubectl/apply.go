// Applying inject's ops to a tree of the document: what changes, before
// any byte is written (diff.go writes the differences).

package kubectl

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

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
	kids     []*entry // a mapping's members or a list's items, in order
	// created: a list an add wrote ([]), or an empty flow list of block
	// YAML, that items were moved into; it is written whole, with the
	// items' source text (writeCreated). emptied: a block list every
	// item moved out of; one left empty is written [] (diffValue).
	created, emptied bool
}

// entry is a member (with its key) or an item of a collection.
type entry struct {
	key     string
	src     int // index in src.kids; -1 when new
	renamed bool
	keyText string // kept source text of a renamed key
	val     *enode
}

func (n *enode) expand() {
	if n.expanded || n.src == nil {
		return
	}
	n.expanded = true
	n.kids = make([]*entry, len(n.src.kids))
	for i, c := range n.src.kids {
		n.kids[i] = &entry{src: i, val: &enode{src: c}}
		if n.src.kind == mapKind {
			n.kids[i].key = n.src.keys[i].str
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
	// format marks the kept texts of this document's format.
	format string
	kept   map[string]string // source texts the record must keep, by place
	edits  []edit
	// moved are the words of a list an op replaced, which later ops may
	// put elsewhere (a command's words going in front of args): they keep
	// their source text there.
	moved []movedWord
	// noFinalNewline: the text's last line, which has no newline, is
	// removed; the line that becomes last loses its newline.
	noFinalNewline bool
	// away: the source items moved out of their list to another (move.go);
	// their lines go with them (cutSpan).
	away map[*snode]origin
}

type edit struct {
	start, end int
	text       string
}

func newEditor(d *document, root *snode) *editor {
	text := d.raw
	// Lines of the whole input: JSON documents start with the space
	// after the one before.
	first := d.line - strings.Count(text[:len(text)-len(strings.TrimLeft(text, " \t\r\n"))], "\n")
	l := &lines{text: text}
	ed := &editor{text: text, first: first, l: l, root: &enode{src: root}, st: deriveStyle(l, root, d.json), kept: map[string]string{}, away: map[*snode]origin{}, format: "yaml:"}
	if d.json {
		ed.format = "json:"
	}
	return ed
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
			i := n.find(t)
			if i < 0 {
				return nil, fmt.Errorf("no member %q", t)
			}
			n = n.kids[i].val
		case n.src.kind == seqKind:
			i, err := strconv.Atoi(t)
			if err != nil || i < 0 || i >= len(n.kids) {
				return nil, fmt.Errorf("no item %q", t)
			}
			n = n.kids[i].val
		default:
			return nil, fmt.Errorf("%q: not a mapping or a list", t)
		}
	}
	n.expand()
	return n, nil
}

// find is the index of member key of a mapping, or -1.
func (n *enode) find(key string) int {
	return slices.IndexFunc(n.kids, func(e *entry) bool { return e.key == key })
}

// apply applies one operation to the tree.
func (ed *editor) apply(op inject.Op) error {
	tokens := inject.Tokens(op.Path)
	if len(tokens) == 0 {
		return fmt.Errorf("%s: the whole document cannot change", op.Path)
	}
	if done, err := ed.moveBetween(op); done {
		return err
	}
	parent, err := ed.resolve(tokens[:len(tokens)-1])
	last := tokens[len(tokens)-1]
	switch {
	case err != nil: // wrapped below, as the errors of the changes
	case parent.src == nil || parent.src.kind == scalarKind:
		err = errCannotEdit
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
	n.text, n.hasText = strings.CutPrefix(op.Text, ed.format) // kept text of another format is not for it
	return n
}

// applyMember applies an add, replace or remove op to member key of the
// mapping parent.
func (ed *editor) applyMember(parent *enode, op inject.Op, key string) error {
	i := parent.find(key)
	switch {
	case op.Op == "remove" && i >= 0:
		parent.kids = slices.Delete(parent.kids, i, i+1)
	case op.Op == "remove" || op.Op == "replace" && i < 0:
		return errors.New("no such member")
	case i >= 0:
		e := parent.kids[i]
		ed.keep(op.Keep, parent, e)
		ed.remember(e.val)
		e.val = ed.fresh(op)
	default:
		keys := make([]string, len(parent.kids))
		for i, e := range parent.kids {
			keys[i] = e.key
		}
		parent.kids = slices.Insert(parent.kids, inject.FieldIndex(keys, key), &entry{key: key, src: -1, val: ed.fresh(op)})
	}
	return nil
}

// applyItem applies an add, replace or remove op to item index (or "-",
// the end) of the list parent.
func (ed *editor) applyItem(parent *enode, op inject.Op, index string) error {
	i, err := strconv.Atoi(index)
	if index == "-" && op.Op == "add" {
		i, err = len(parent.kids), nil
	}
	if err != nil || i < 0 || i > len(parent.kids) || i == len(parent.kids) && op.Op != "add" {
		return errors.New("no such index")
	}
	item := &entry{src: -1, val: ed.fresh(op)}
	switch op.Op {
	case "add":
		parent.kids = slices.Insert(parent.kids, i, item)
	case "replace":
		parent.kids[i] = item
	default:
		parent.kids = slices.Delete(parent.kids, i, i+1)
	}
	return nil
}

// rename applies a move op within the mapping parent: member from becomes
// member to, keeping its value's text.
func (ed *editor) rename(parent *enode, op inject.Op, from, to string) error {
	i := parent.find(from)
	if parent.src.kind != mapKind || i < 0 || parent.find(to) >= 0 {
		return fmt.Errorf("%w: a rename of a member to a new name only", errCannotEdit)
	}
	e := parent.kids[i]
	if e.src >= 0 {
		ed.keepKey(op.Keep, parent.src.keys[e.src])
	}
	e.key, e.renamed = to, true
	e.keyText, _ = strings.CutPrefix(op.Text, ed.format)
	return nil
}
