// The editor's one data structure: a document as a tree in which every
// node owns its bytes, for YAML and JSON alike (ARCHITECTURE.md draws
// it). inject's operations change the tree; writing it walks the changed
// nodes and writes every other one back as it was read.

package kubectl

import (
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

type kind int

const (
	scalarKind kind = iota
	mapKind
	seqKind
)

// node is a value and the bytes it owns: from its slot (in block style
// the space after its key's ':', otherwise the value itself) to its end.
// A collection's bytes are open, then each item's, then close.
type node struct {
	kind        kind
	flow        bool   // {} [] (all of JSON)
	dirty       bool   // changed: written from its items, not from text
	compact     bool   // JSON on one line: what goes in is too (resolve)
	text        string // the bytes read (or a new value's)
	open, close string
	items       []*item
	at, end     int // the value's bytes in the source; at < 0: a new value
	col         int // new items' column (flow: indentation; -1: none yet)
	shift       int // columns its lines after the first move by (a moved item)
	trail       int // the length of its trailing bytes
	lists       int // a block mapping's block lists: indented (1), not (-1), none (0)
	y           *yaml.Node
	str         string // a string's value
}

// item is a member or list item and the bytes around it: lead (in block
// style the line break before it, the lines above it and its indentation;
// in flow style the separator), the key as written, mid (':' or '-' and
// the spaces after), the value, and tail (in block style the rest of its
// last line, and the comment lines indented under it).
type item struct {
	lead, keyText, mid, tail string
	key                      string
	val                      *node
	at                       int // its key's or '-''s offset in the source; -1: new
}

// write writes n's bytes to b: as read, unless it changed ([] for a
// block list left empty).
func (ed *editor) write(b *strings.Builder, n *node) {
	out := b
	if n.shift != 0 { // written on its own, then re-indented
		out = &strings.Builder{}
	}
	switch {
	case !n.dirty:
		out.WriteString(n.text)
	case !n.flow && n.kind == seqKind && len(n.items) == 0:
		out.WriteString(" []")
		fallthrough
	default:
		out.WriteString(n.open)
		for _, it := range n.items {
			out.WriteString(it.lead)
			out.WriteString(it.keyText)
			out.WriteString(it.mid)
			ed.write(out, it.val)
			out.WriteString(it.tail)
		}
		out.WriteString(n.close)
	}
	if out != b {
		b.WriteString(ed.st.shift(out.String(), n.shift))
	}
}

// index is the position of member or item t of n, or -1.
func (n *node) index(t string) int {
	if n.kind == seqKind {
		if i, err := strconv.Atoi(t); err == nil && i >= 0 && i < len(n.items) {
			return i
		}
		return -1
	}
	return slices.IndexFunc(n.items, func(it *item) bool { return it.key == t }) // a scalar has no items
}

// trailing is the tail of a block collection's last item, and of that
// one's last, and so on down: it stays when the value is replaced.
func trailing(n *node) string { return n.text[len(n.text)-n.trail:] }
