// Reading a YAML document into the tree the editor works on: yaml.v3's
// nodes, with the byte span of each (yaml.v3 gives only where a node
// starts, so the ends are found here).

package kubectl

import (
	"errors"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxDepth bounds nesting in any document, so that reading one costs in
// proportion to its size (a Pod template nests about 15 levels).
const maxDepth = 1000

type kind int

const (
	scalarKind kind = iota
	mapKind
	seqKind
)

// snode is a node of a source document with the bytes it spans: the one
// tree the editor works on, for YAML and for JSON.
type snode struct {
	kind       kind
	flow       bool // flow style: {} [] (always, in JSON)
	start, end int  // the value's bytes, end exclusive
	// A mapping's keys and values, a sequence's items (kids).
	keys, kids []*snode
	// dash: a block sequence's "-" of each item; colon: a block mapping's
	// offset just after each key's ':'.
	dash, colon []int
	str         string     // a scalar key's text, a string scalar's value
	style       yaml.Style // a YAML scalar's quoting
	y           *yaml.Node // the YAML node (nil for JSON)
}

// errCannotEdit is a layout the editor does not edit in place.
var errCannotEdit = errors.New("cannot edit in place")

// refuse says that the editor cannot write into a layout: what it is, on
// which line, and what the user can do instead.
func refuse(line int, what, fix string) error {
	return fmt.Errorf("line %d: %w: %s: %s", line, errCannotEdit, what, fix)
}

// readYAML builds the tree of a YAML document from yaml.v3's nodes.
func readYAML(text string, root *yaml.Node) (*snode, error) {
	l := &lines{text: text, arena: newArena(root)}
	return l.yamlNode(root, 0, 0)
}

func (l *lines) yamlNode(n *yaml.Node, parentIndent, depth int) (*snode, error) {
	switch {
	case depth > maxDepth:
		return nil, fmt.Errorf("line %d: nested more than %d levels", n.Line, maxDepth)
	case n.Kind == yaml.AliasNode:
		return nil, refuse(n.Line, "a YAML alias (*)", "write the value out")
	case n.Anchor != "":
		return nil, refuse(n.Line, "a YAML anchor (&)", "write the value out where it is used, without anchors")
	}
	s := l.arena.node()
	*s = snode{y: n, start: l.offset(n.Line, n.Column), flow: n.Style&yaml.FlowStyle != 0, style: n.Style}
	var err error
	switch n.Kind {
	case yaml.MappingNode:
		err = l.yamlMapping(s, n, parentIndent, depth)
	case yaml.SequenceNode:
		err = l.yamlSequence(s, n, parentIndent, depth)
	default: // a scalar: yaml.v3 makes no other kind of node inside a document
		s.str = n.Value
		s.end, err = l.scalarEnd(n, s.start, parentIndent)
	}
	if err != nil {
		return nil, err
	}
	switch {
	case s.kind == scalarKind:
	case s.flow:
		if s.end = l.flowEnd(s); s.end < 0 {
			return nil, refuse(n.Line, "a flow collection ({ } or [ ]) without brackets of its own", "write it in block style")
		}
	case len(s.kids) > 0:
		s.end = s.kids[len(s.kids)-1].end
	}
	return s, nil
}

// yamlMapping reads the keys and values of the mapping n into s, each
// with the offset after its ':' (an empty value is there).
func (l *lines) yamlMapping(s *snode, n *yaml.Node, parentIndent, depth int) error {
	s.kind = mapKind
	n2 := len(n.Content) / 2
	s.keys, s.kids, s.colon = take(&l.arena.ptrs, n2), take(&l.arena.ptrs, n2), take(&l.arena.ints, n2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, err := l.yamlNode(n.Content[i], parentIndent, depth+1)
		if err != nil {
			return err
		}
		v, err := l.yamlNode(n.Content[i+1], k.start-l.lineStart(k.start), depth+1)
		if err != nil {
			return err
		}
		colon := l.colonAfter(k.end)
		if colon < 0 {
			return refuse(n.Content[i].Line, "a key written with '?' or over several lines", "write it as key: value on one line")
		}
		if isEmptyNull(n.Content[i+1]) {
			v.start, v.end = colon, colon
		}
		s.keys, s.kids, s.colon = append(s.keys, k), append(s.kids, v), append(s.colon, colon)
	}
	return nil
}

// yamlSequence reads the items of the list n into s; a block list's with
// the offset of each '-' (an empty item is just after it).
func (l *lines) yamlSequence(s *snode, n *yaml.Node, parentIndent, depth int) error {
	s.kind = seqKind
	s.kids = take(&l.arena.ptrs, len(n.Content))
	if !s.flow {
		s.dash = take(&l.arena.ints, len(n.Content))
	}
	for _, c := range n.Content {
		itemIndent, d := parentIndent, -1
		if !s.flow {
			at := l.offset(c.Line, c.Column)
			d = strings.LastIndexByte(strings.TrimRight(l.text[:at], " \t\r\n"), '-')
			if d < 0 || strings.TrimSpace(l.text[d+1:at]) != "" {
				return refuse(c.Line, "a list item that does not follow its '-'", "write each item after its '- '")
			}
			itemIndent = d - l.lineStart(d)
		}
		item, err := l.yamlNode(c, itemIndent, depth+1)
		if err != nil {
			return err
		}
		if d >= 0 {
			if isEmptyNull(c) {
				item.start, item.end = d+1, d+1
			}
			s.dash = append(s.dash, d)
		}
		s.kids = append(s.kids, item)
	}
	return nil
}

func isEmptyNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Value == "" && n.Style == 0 && n.ShortTag() == "!!null"
}

// colonAfter is the offset after the ':' that follows a key, or -1.
func (l *lines) colonAfter(off int) int {
	for off < len(l.text) && (l.text[off] == ' ' || l.text[off] == '\t') {
		off++
	}
	if off < len(l.text) && l.text[off] == ':' {
		return off + 1
	}
	return -1
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
		return l.blockEnd(start, parentIndent), nil
	case strings.HasPrefix(text[start:], n.Value) && !strings.Contains(n.Value, "\n"):
		return start + len(n.Value), nil
	}
	return 0, refuse(n.Line, "a plain scalar over several lines", "quote it, or write it on one line")
}

// quotedEnd is the offset after the quoted scalar at start: double
// quotes with backslash escapes, or single quotes in which a quote is
// written twice; -1 when it does not end.
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

// blockEnd is where the block scalar (| or >) at start, in a node
// indented parentIndent, ends: at the line break of its last line. With
// keep chomping (|+, >+) the blank lines after the text are part of the
// value; otherwise they are not.
func (l *lines) blockEnd(start, parentIndent int) int {
	text := l.text
	end := l.lineEnd(start)
	keep := strings.Contains(strings.Fields(text[start:end] + " ")[0], "+")
	for pos := end; pos < len(text); {
		next := l.lineEnd(pos)
		line := strings.TrimRight(text[pos:next], "\r\n")
		if strings.TrimSpace(line) == "" {
			if pos = next; keep {
				end = next
			}
			continue
		}
		if len(line)-len(strings.TrimLeft(line, " ")) <= parentIndent {
			break
		}
		end, pos = next, next
	}
	if strings.HasSuffix(text[:end], "\n") { // not so on the last line without one
		end = len(strings.TrimSuffix(text[:end-1], "\r"))
	}
	return end
}

// flowEnd is the offset after the closing bracket of the flow collection
// s, past blanks, ',' and comments after its last item; -1 without one.
func (l *lines) flowEnd(s *snode) int {
	i := s.start + 1
	if len(s.kids) > 0 {
		i = s.kids[len(s.kids)-1].end
	}
	for ; i < len(l.text) && strings.IndexByte("[{", l.text[s.start]) >= 0; i++ {
		switch l.text[i] {
		case ']', '}':
			return i + 1
		case '#':
			i = l.lineEnd(i) - 1
		case ' ', '\t', '\r', '\n', ',':
		default:
			return -1
		}
	}
	return -1
}
