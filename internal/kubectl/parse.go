// Reading a YAML document into the editor's tree: yaml.v3's nodes, each
// given the bytes it owns (yaml.v3 says only where a node starts).

package kubectl

import (
	"cmp"
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxDepth bounds nesting (a Pod template nests about 15 levels).
const maxDepth = 1000

// errCannotEdit is a layout the editor does not edit in place.
var errCannotEdit = errors.New("cannot edit in place")

// refuse says what layout on which line the editor cannot write into,
// and what the user can do instead.
func refuse(line int, what, fix string) error {
	return fmt.Errorf("line %d: %w: %s: %s", line, errCannotEdit, what, fix)
}

// readYAML builds the tree of a YAML document; its root owns the whole
// text.
func readYAML(text string, root *yaml.Node) (*node, error) {
	l, n := &lines{text: text}, &node{}
	if err := l.read(root, n, 0, 0, 0); err != nil {
		return nil, err
	}
	n.close, n.text = n.close+text[n.end:], text
	return n, nil
}

// check refuses what the editor does not read: too deep, aliases, anchors.
func check(n *yaml.Node, depth int) error {
	switch {
	case depth > maxDepth:
		return fmt.Errorf("line %d: nested more than %d levels", n.Line, maxDepth)
	case n.Kind == yaml.AliasNode:
		return refuse(n.Line, "a YAML alias (*)", "write the value out")
	case n.Anchor != "":
		return refuse(n.Line, "a YAML anchor (&)", "write the value out where it is used, without anchors")
	}
	return nil
}

// read makes v the node of n, whose bytes start at slot.
func (l *lines) read(n *yaml.Node, v *node, slot, parentIndent, depth int) error {
	if err := check(n, depth); err != nil {
		return err
	}
	*v = node{y: n, at: slot, end: slot, flow: n.Style&yaml.FlowStyle != 0}
	var err error
	switch {
	case n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode:
		v.at = l.offset(n.Line, n.Column)
		err = l.collection(v, slot, depth)
	case !isEmptyNull(n): // a scalar: yaml.v3 makes no other kind of node inside a document
		v.at = l.offset(n.Line, n.Column)
		v.end, err = l.scalarEnd(n, v.at, parentIndent)
	}
	if err != nil {
		return err
	}
	v.text, v.str = l.text[slot:v.end], n.Value
	return nil
}

// collection reads the items of the mapping or list v.y, whose bytes
// start at slot: each from the line break or separator before it.
func (l *lines) collection(v *node, slot, depth int) error {
	n := v.y
	v.kind, v.col = seqKind, -1
	step := 1
	if n.Kind == yaml.MappingNode {
		v.kind, step = mapKind, 2
	}
	prev := slot // where the bytes of the next item begin
	if v.flow {
		prev = v.at + 1
	}
	count := len(n.Content) / step // items and values: one allocation each
	items, vals := make([]item, count), make([]node, count)
	v.items = make([]*item, count)
	for i := range count {
		c, it := n.Content[i*step+step-1], &items[i]
		var vslot, indent int
		if step == 2 {
			kn := n.Content[i*step]
			it.at = l.offset(kn.Line, kn.Column)
			end, err := l.scalarEnd(kn, it.at, 0)
			if err = cmp.Or(check(kn, depth+1), err); err != nil {
				return err
			}
			rest := strings.TrimLeft(l.text[end:], " \t") // then the key's ':'
			if !strings.HasPrefix(rest, ":") {
				return refuse(kn.Line, "a key written with '?' or over several lines", "write it as key: value on one line")
			}
			it.key, it.keyText, vslot = kn.Value, l.text[it.at:end], len(l.text)-len(rest)+1
			if v.flow && !isEmptyNull(c) {
				vslot = l.offset(c.Line, c.Column)
			}
			it.mid = l.text[end:vslot]
		} else {
			it.at = l.offset(c.Line, c.Column)
			vslot = it.at
			if !v.flow {
				d := strings.LastIndexByte(strings.TrimRight(l.text[:it.at], " \t\r\n"), '-')
				if d < 0 || strings.TrimSpace(l.text[d+1:it.at]) != "" {
					return refuse(c.Line, "a list item that does not follow its '-'", "write each item after its '- '")
				}
				if it.at = d; isEmptyNull(c) {
					vslot = d + 1
				}
				it.mid = l.text[d:vslot]
			}
		}
		if it.at < prev { // what the item before read as one line went on past a break YAML reads (NEL, U+2028)
			return refuse(c.Line, "a line break other than \\n, \\r\\n or \\r", "end every line with \\n")
		}
		if !v.flow {
			indent = l.column(it.at)
		}
		val := &vals[i]
		if err := l.read(c, val, vslot, indent, depth+1); err != nil {
			return err
		}
		it.lead, it.val, prev = l.text[prev:it.at], val, val.end
		if !v.flow {
			prev = l.under(val.end, indent, true, false) // the comment lines under it
			it.tail = l.text[val.end:prev]
		}
		if v.lists == 0 && step == 2 && !v.flow && val.kind == seqKind && !val.flow {
			if v.lists = -1; val.col > indent {
				v.lists = 1
			}
		}
		v.items[i] = it
	}
	if !v.flow {
		last := v.items[len(v.items)-1]
		v.end, v.col, v.trail = prev, l.column(v.items[0].at), last.val.trail+len(last.tail)
		return nil
	}
	if v.end = l.flowEnd(v.at, prev); v.end < 0 {
		return refuse(n.Line, "a flow collection ({ } or [ ]) without brackets of its own", "write it in block style")
	}
	l.brackets(v, slot, prev)
	return nil
}

// brackets gives the flow collection v, read from slot to v.end with its
// last item ending at prev, its opening and closing bytes.
func (l *lines) brackets(v *node, slot, prev int) {
	in := v.at + 1
	if len(v.items) == 0 { // spaces inside stay in front of what goes in
		in, prev = v.end-1, v.end-1
	} else {
		v.col = l.indentOf(v.items[0].at)
	}
	v.open, v.close = l.text[slot:in], l.text[prev:v.end]
}

func isEmptyNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Value == "" && n.Style == 0 && n.ShortTag() == "!!null"
}

// under is where the lines after the one holding off stop going with
// it: those indented past col (comment lines only, for comments), and
// the blank lines between them (after them too, for keep).
func (l *lines) under(off, col int, comments, keep bool) int {
	end := l.lineStop(off)
	for start, stop := l.next(end); start < len(l.text); start, stop = l.next(stop) {
		line := l.text[start:stop]
		switch t := strings.TrimLeft(line, " "); {
		case t == "" || !comments && strings.TrimSpace(t) == "":
			if keep {
				end = stop
			}
		case len(line)-len(t) <= col || comments && t[0] != '#':
			return end
		default:
			end = stop
		}
	}
	return end
}

// scalarEnd finds where a scalar's text ends.
func (l *lines) scalarEnd(n *yaml.Node, start, parentIndent int) (int, error) {
	text := l.text
	switch {
	case start >= len(text):
		return start, nil
	case text[start] == '!':
		return 0, refuse(n.Line, "a YAML tag", "write the value without the tag")
	case n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0:
		if end := quotedEnd(text, start); end > 0 {
			return end, nil
		}
		return 0, refuse(n.Line, "a quoted scalar without its closing quote", "close the quote")
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		// A block scalar ends at the line break of its last line, or with
		// keep chomping (|+) of its last blank line.
		keep := strings.Contains(strings.Fields(text[start:l.lineStop(start)] + " ")[0], "+")
		return l.under(start, parentIndent, false, keep), nil
	case strings.HasPrefix(text[start:], n.Value) && !strings.Contains(n.Value, "\n"):
		return start + len(n.Value), nil
	}
	return 0, refuse(n.Line, "a plain scalar over several lines", "quote it, or write it on one line")
}

// quotedEnd is the offset after the quoted scalar at start, or -1.
func quotedEnd(text string, start int) int {
	q := text[start]
	for i := start + 1; i < len(text); i++ {
		switch {
		case q == '"' && text[i] == '\\':
			i++
		case q == '\'' && text[i] == q && i+1 < len(text) && text[i+1] == q:
			i++
		case text[i] == q:
			return i + 1
		}
	}
	return -1
}

// flowEnd is the offset after the closing bracket of the flow collection
// at start whose last item ends at from, or -1.
func (l *lines) flowEnd(start, from int) int {
	for i := from; i < len(l.text) && strings.IndexByte("[{", l.text[start]) >= 0; i++ {
		switch l.text[i] {
		case ']', '}':
			return i + 1
		case '#':
			i = l.lineStop(i)
		case ' ', '\t', '\r', '\n', ',':
		default:
			return -1
		}
	}
	return -1
}
