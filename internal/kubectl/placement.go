// Where new bytes go and how they look there: the document's style,
// the place of a new member or item, its indentation and quoting.

package kubectl

import (
	"cmp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// deriveStyle reads how the document indents, ends lines and quotes.
func deriveStyle(l *lines, root *snode, json bool) style {
	s := style{json: json, step: 2, nl: "\n"}
	if strings.Contains(l.text, "\r\n") {
		s.nl = "\r\n"
	}
	col := func(off int) int { return off - l.lineStart(off) }
	if json {
		s.single = !strings.Contains(strings.TrimSpace(l.text), "\n")
		s.tabs = strings.Contains(l.text, "\n\t")
		if !s.single && len(root.kids) > 0 && root.kind == mapKind && col(root.keys[0].start) > 0 {
			s.step = col(root.keys[0].start)
		}
		return s
	}
	foundStep, foundSeq := false, false
	var walk func(n *snode, depth int)
	walk = func(n *snode, depth int) {
		if depth > 20 || n.flow || foundStep && foundSeq {
			return
		}
		for i, v := range n.kids {
			if n.kind == mapKind && !v.flow && len(v.kids) > 0 {
				keyCol := col(n.keys[i].start)
				switch {
				case v.kind == mapKind && !foundStep && col(v.keys[0].start) > keyCol:
					s.step, foundStep = col(v.keys[0].start)-keyCol, true
				case v.kind == seqKind && !foundSeq && len(v.dash) > 0:
					s.seqIn, foundSeq = col(v.dash[0]) > keyCol, true
				}
			}
			walk(v, depth+1)
		}
	}
	walk(root, 0)
	return s
}

func (ed *editor) column(off int) int { return off - ed.l.lineStart(off) }

// neighbours are the indices in src of the kept members or items next
// after and last before position j of a changed collection (-1: none).
func neighbours(kids []*entry, j int) (next, prev int) {
	next, prev = -1, -1
	for k := j + 1; k < len(kids) && next < 0; k++ {
		next = kids[k].src
	}
	for k := j - 1; k >= 0 && prev < 0; k-- {
		prev = kids[k].src
	}
	return next, prev
}

// insertKid writes the new member or item j of n: a list created for
// moved items, an item moved from another list, or a new value.
func (ed *editor) insertKid(n *enode, j int) error {
	e, src := n.kids[j], n.src
	switch {
	case e.val.created:
		return ed.insertCreated(n, j)
	case e.val.src != nil && src.kind == seqKind:
		return ed.paste(n, j)
	}
	next, prev := neighbours(n.kids, j)
	return ed.insert(src, next, prev, j, len(n.kids), func(indent int) string {
		v := e.val.val
		flow := ed.st.json || src.flow
		if src.kind == mapKind {
			if flow {
				return ed.st.key(e.key) + ": " + cmp.Or(e.val.text, ed.st.flow(v, indent))
			}
			return ed.st.key(e.key) + ":" + ed.styleIn(src).block(v, indent)
		}
		text, moved := ed.movedText(v, src.flow, indent)
		switch {
		case flow && moved:
			return text
		case flow:
			return ed.st.flow(v, indent)
		case moved:
			return "- " + text
		}
		return "-" + ed.st.item(v, indent)
	})
}

// insert writes a new member or item (text, given its indentation) before
// the kept one at next, or after the one at prev. j is its position among
// the count members or items the collection has now: an empty flow
// collection gets all of them, so the first opens it, the others follow
// it with a separator, and the last closes it.
func (ed *editor) insert(src *snode, next, prev, j, count int, text func(indent int) string) error {
	if src.flow {
		return ed.insertFlow(src, next, prev, j, count, text)
	}
	col := ed.column(itemStart(src, 0))
	line := func() string { return strings.Repeat(" ", col) + text(col) }
	var at int
	switch {
	case next >= 0 && ed.l.onlySpaceBefore(itemStart(src, next)):
		// Comment lines above it belong to it.
		at = ed.linesAbove(ed.l.lineStart(itemStart(src, next)), 0, func(above string) bool {
			return strings.HasPrefix(strings.TrimSpace(above), "#")
		})
	case prev < 0 && next < 0:
		return refuse(ed.lineAt(src.start), "a collection whose every item is replaced", "write it in flow style ([ ] or { })")
	default:
		if prev < 0 {
			prev = next // on the line after the one it shares a line with
		}
		at = ed.l.lineEnd(src.kids[prev].end)
		if at < len(ed.text) || strings.HasSuffix(ed.text, "\n") {
			break
		}
		// On the last line, without a line break: one goes before the new
		// line, which the last scalar before it must not take into its
		// value, as a block scalar does unless it strips it (|-, >-).
		b := src.kids[prev]
		for len(b.kids) > 0 && !b.flow {
			b = b.kids[len(b.kids)-1]
		}
		block := b.kind == scalarKind && b.style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0
		if block && !strings.Contains(strings.Fields(ed.text[b.start:] + " ")[0], "-") {
			return refuse(ed.lineAt(b.start), "a block scalar (| or >) on the last line of a file without a final newline", "end the file with a newline")
		}
		ed.add(at, at, ed.st.nl+line())
		return nil
	}
	ed.add(at, at, line()+ed.st.nl)
	return nil
}

// insertFlow is insert into a flow collection: after ", " on one line,
// or on a line of its own in pretty JSON.
func (ed *editor) insertFlow(src *snode, next, prev, j, count int, text func(indent int) string) error {
	indent := ed.indentOf(src.start, " ") + ed.st.step
	if len(src.kids) > 0 {
		indent = ed.indentOf(itemStart(src, 0), " ")
	}
	sep := ", "
	if ed.st.json && !ed.st.single && strings.Contains(ed.text[src.start:src.end], "\n") {
		sep = "," + ed.st.nl + strings.Repeat(" ", indent)
	}
	switch {
	case next >= 0:
		at := itemStart(src, next)
		ed.add(at, at, text(indent)+sep)
	case prev >= 0:
		ed.add(src.kids[prev].end, src.kids[prev].end, sep+text(indent))
	case len(src.kids) == 0:
		ed.fillEmpty(src, j, count, indent, text(indent))
	default:
		return refuse(ed.lineAt(src.start), "a flow collection whose every item is replaced", "write it in block style")
	}
	return nil
}

// fillEmpty writes the new item j of count into the empty flow collection
// src, in order, before its closing bracket; pretty JSON puts each on its
// own line, and the closing bracket on the line after the last.
func (ed *editor) fillEmpty(src *snode, j, count, indent int, text string) {
	pretty := ed.st.json && !ed.st.single && src.end-src.start == 2 // [] or {}, nothing between
	sep, open, closing := ", ", "", ""
	if pretty {
		open = ed.st.nl + strings.Repeat(" ", indent)
		sep, closing = ","+open, ed.st.nl+strings.Repeat(" ", ed.indentOf(src.start, " "))
	}
	if j > 0 {
		open = sep
	}
	if j == count-1 {
		text += closing
	}
	// Spaces between the brackets stay in front of the items, where
	// removing the items gives them back.
	ed.add(src.end-1, src.end-1, open+text)
}

// styleIn is the style for new values of a block mapping: block lists
// indented as its own lists are, when it has any.
func (ed *editor) styleIn(m *snode) style {
	st := ed.st
	for i, v := range m.kids {
		if v.kind == seqKind && !v.flow && len(v.dash) > 0 {
			st.seqIn = ed.column(v.dash[0]) > ed.column(m.keys[i].start)
			break
		}
	}
	return st
}

// itemStart is where member or item i of src begins: its key, its "-",
// or (flow) the item itself.
func itemStart(src *snode, i int) int {
	switch {
	case src.kind == mapKind:
		return src.keys[i].start
	case !src.flow:
		return src.dash[i]
	}
	return src.kids[i].start
}

// linesAbove moves the line start at up over the lines right above it
// (not past top) that belong, says belongs, to what follows them.
func (ed *editor) linesAbove(at, top int, belongs func(line string) bool) int {
	for at > top {
		prev := ed.l.lineStart(at - 1)
		if !belongs(strings.TrimRight(ed.text[prev:at], "\r\n")) {
			break
		}
		at = prev
	}
	return at
}

// replacement is where a new value v for member or item i of parent
// starts, and its text: in block style, a member's just after "key:", an
// item's where the old one starts (after "- ").
func (ed *editor) replacement(v any, parent *snode, i int) (int, string) {
	old := parent.kids[i]
	switch {
	case ed.st.json || parent.flow:
		return old.start, ed.st.flow(v, ed.indentOf(old.start, " "))
	case parent.kind == mapKind:
		return parent.colon[i], ed.styleIn(parent).block(v, ed.column(parent.keys[i].start))
	}
	text := ed.st.item(v, ed.column(parent.dash[i]))
	if old.start != old.end && !strings.HasPrefix(text, ed.st.nl) {
		text = strings.TrimPrefix(text, " ") // in place of the old item's text
	}
	return old.start, text
}
