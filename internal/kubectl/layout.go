// Where the bytes of a new or moved member or item go, and how they look
// there: one route for every insertion (insert), one for every removal
// (cut), in the document's own style.

package kubectl

import (
	"cmp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/job-signal/job-signal/inject"
)

// newItem is a new member key (or item, key "") of n holding v, laid out
// as n's are: in block style on a line of its own at n's column.
func (ed *editor) newItem(n *node, key string, v *node) *item {
	it := &item{key: key, val: v, at: -1}
	switch {
	case n.kind == mapKind && n.flow:
		it.keyText, it.mid = ed.st.key(key), ": "
	case n.kind == mapKind:
		it.keyText, it.mid = ed.st.key(key), ":"
	case !n.flow:
		it.mid = "-"
	}
	if !n.flow {
		it.lead = ed.st.nl + ed.st.pad(n.col)
	}
	return it
}

// fresh is the value op writes for a member or item of n: its kept
// source text, a moved word's text, or its value written as n's
// neighbours are; an empty list one that items can go into.
func (ed *editor) fresh(n *node, op inject.Op) *node {
	text, kept := strings.CutPrefix(op.Text, ed.format)
	if l, ok := op.Value.([]any); ok && len(l) == 0 && !kept {
		return ed.emptyList(n)
	}
	if !kept && n.kind == seqKind {
		if text, kept = ed.movedText(op.Value, n.flow, n.col); kept && !n.flow {
			text = " " + text
		}
	}
	if !kept {
		text = ed.render(n, op.Value)
	}
	return &node{at: -1, text: text}
}

// render writes v as a member or item of n: after the key's ':' or the
// '-' in block style, in its place in flow style.
func (ed *editor) render(n *node, v any) string {
	if !n.flow {
		return ed.styleIn(n).block(v, n.col, n.kind == seqKind)
	}
	st := ed.st
	st.single = st.single || n.compact
	return st.flow(v, ed.indent(n))
}

// emptyList is a new empty list for a member or item of n: [] in flow
// style; in block YAML one whose '-' go where n's lists have theirs.
func (ed *editor) emptyList(n *node) *node {
	l := &node{kind: seqKind, at: -1, dirty: true, compact: n.compact, flow: n.flow, col: ed.indent(n) + ed.st.step}
	if l.flow {
		l.open, l.close = "[", "]"
	} else if l.col = n.col; ed.styleIn(n).seqIn {
		l.col += ed.st.step
	}
	return l
}

// insert puts it at position j of n: in flow style with a separator; in
// block style before the next item and the lines above it that belong to
// it (belongs; nil: comment lines), or after the one before.
func (ed *editor) insert(n *node, j int, it *item, belongs func(string) bool) error {
	n.dirty = true
	if n.flow {
		sep := ed.sep(n, belongs != nil)
		switch {
		case j < len(n.items):
			it.lead, n.items[j].lead = n.items[j].lead, sep
		case j > 0:
			it.lead = sep
		case strings.HasPrefix(sep, ","+ed.st.nl): // pretty JSON, nothing between the brackets
			it.lead, n.close = sep[1:], ed.st.nl+ed.st.pad(ed.indent(n)-ed.st.step)+n.close
		}
		n.items = slices.Insert(n.items, j, it)
		return nil
	}
	if belongs == nil {
		belongs = func(line string) bool { return strings.HasPrefix(strings.TrimSpace(line), "#") }
	}
	if j < len(n.items) {
		next, k := n.items[j], -1
		if next.at < 0 || ed.own(next.at) {
			k = above(next.lead, belongs)
		}
		if k < 0 { // on the line after the one it shares a line with
			j++
		} else {
			it.lead, next.lead = next.lead[:k]+it.lead, next.lead[k:]
		}
	}
	if j == len(n.items) && j > 0 && !strings.HasSuffix(ed.text, "\n") {
		// After a last line without a line break: a block scalar there
		// would take the new one into its value, unless it strips it (|-).
		b := n.items[j-1].val
		for !b.flow && len(b.items) > 0 {
			b = b.items[len(b.items)-1].val
		}
		if b.y != nil && b.y.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 && b.end == len(ed.text) && !strings.Contains(strings.Fields(ed.text[b.at:] + " ")[0], "-") {
			return refuse(ed.lineAt(b.at), "a block scalar (| or >) on the last line of a file without a final newline", "end the file with a newline")
		}
	}
	n.items = slices.Insert(n.items, j, it)
	return nil
}

// sep is what goes between two items of the flow collection n: in pretty
// JSON a line break and the items' indentation; before a moved item what
// is between n's first two, or the document's first flow collection's;
// otherwise ", ".
func (ed *editor) sep(n *node, moved bool) string {
	switch {
	case ed.st.json && !n.compact && (n.at < 0 || len(n.text) == 2 || strings.Contains(n.text, "\n")):
		return "," + ed.st.nl + ed.st.pad(ed.indent(n))
	case !moved:
		return ", "
	case len(n.items) > 1:
		return n.items[1].lead
	case len(n.items) == 1 && n.items[0].at >= 0 && ed.own(n.items[0].at):
		return "," + ed.st.nl + ed.st.pad(ed.column(n.items[0].at))
	}
	return cmp.Or(firstSep(ed.root, 0), ", ")
}

// firstSep is the one-line separator of the first flow collection under
// n with two items, or "".
func firstSep(n *node, depth int) string {
	if n.flow && len(n.items) > 1 && !strings.Contains(n.items[1].lead, "\n") {
		return n.items[1].lead
	}
	for _, it := range n.items {
		if sep := firstSep(it.val, depth+1); sep != "" && depth < maxDepth {
			return sep
		}
	}
	return ""
}

// remove removes item i of n; in block style the lines above it stay.
func (ed *editor) remove(n *node, i int) error {
	it := n.items[i]
	if !n.flow && it.at >= 0 && !ed.own(it.at) {
		return refuse(ed.lineAt(it.at), "a key to remove that shares its line with the '-' or key before it", "put it on a line of its own")
	}
	ed.cut(n, i, above(it.lead, nil))
	return nil
}

// cut takes item i out of n: in block style with its lead from k on, in
// flow style with the separator after it (before it, for the last); pretty
// JSON left empty is [] or {} again.
func (ed *editor) cut(n *node, i, k int) {
	n.dirty = true
	it := n.items[i]
	n.items = slices.Delete(n.items, i, i+1)
	rest := it.lead
	if !n.flow {
		rest = it.lead[:max(k, 0)]
	}
	switch {
	case n.flow && len(n.items) == 0:
		b := strings.LastIndexAny(n.open, "[{")
		if in := it.lead + n.close[:len(n.close)-1]; strings.TrimSpace(in) == "" && strings.Contains(in, "\n") {
			n.open, n.close = n.open[:b+1], n.close[len(n.close)-1:]
		} else {
			n.open += it.lead
		}
	case n.flow && i < len(n.items):
		n.items[i].lead = rest
	case n.flow:
	case i < len(n.items):
		n.items[i].lead = rest + n.items[i].lead
	case i > 0:
		n.items[i-1].tail += rest
	default:
		n.open += rest
	}
}

// above is the offset of the line break before the lines at the end of
// lead that belong to what follows (belongs; nil: none), or -1 when lead
// has none.
func above(lead string, belongs func(string) bool) int {
	k := strings.LastIndexByte(lead, '\n')
	for k >= 0 {
		if k > 0 && lead[k-1] == '\r' {
			k--
		}
		p := strings.LastIndexByte(lead[:k], '\n')
		if p < 0 || belongs == nil || !belongs(lead[p+1:k]) {
			return k
		}
		k = p
	}
	return k
}

// movable says which lines above an item at col go with it when it
// moves: blank lines, and comments not indented past it.
func (ed *editor) movable(col int) func(string) bool {
	return func(line string) bool {
		t := strings.TrimLeft(line, " ")
		return t == "" || strings.HasPrefix(t, "#") && len(line)-len(t) <= col
	}
}

// relayout fits the item it, moved from list, to the list target: block
// to block re-indented whole, into flow style its value alone.
func (ed *editor) relayout(it *item, list, target *node) error {
	v := it.val
	switch {
	case !list.flow && !target.flow:
		n := target.col - ed.column(it.at)
		s := ed.st.shift(it.lead+"-", n) // its '-' line, not blank, moves too
		it.lead, it.tail, v.shift = s[:len(s)-1], ed.st.shift(it.tail, n), v.shift+n
	case !target.flow:
		it.lead, it.mid, it.tail, v.shift = ed.st.nl+ed.st.pad(target.col), "- ", "", v.shift+target.col+2-ed.column(v.at)
	case !list.flow && !v.flow:
		return refuse(ed.lineAt(v.at), "a container in block style that moves into a flow list ([ ])", "write that list in block style, or leave it out when it is empty")
	default:
		it.lead, it.mid, it.tail, v.shift = "", "", "", v.shift+ed.indent(target)-ed.column(v.at)
	}
	return nil
}
