// Moving a list item to another list: the bytes. The item's source text
// is cut from its list with the lines that belong to it (blank lines and
// comments above its '-', comments indented under it after its last
// line) and pasted into the other list, changed as the ops on its new
// path say, and re-indented to that list's items; in flow lists and JSON
// the item's value alone. Lists created for moved items: created.go.

package kubectl

import "strings"

// cutSpan is the span [start, end) that deletions removes for member or
// item i of src, widened for an item moved away (or a list whose last
// item moved away) to the lines that go with it.
func (ed *editor) cutSpan(src *snode, i, start, end int) (int, int) {
	switch v := src.kids[i]; {
	case src.flow:
	case src.kind == seqKind:
		if _, moved := ed.away[v]; moved {
			return ed.leadingStart(src, i), ed.trailingEnd(src, i)
		}
	case v.kind == seqKind && !v.flow && len(v.kids) > 0:
		if _, moved := ed.away[v.kids[len(v.kids)-1]]; moved {
			return start, ed.trailingEnd(v, len(v.kids)-1)
		}
	}
	return start, end
}

// leadingStart is the start of the lines above item k of the block list
// src that go with it: blanks, and comments not indented past its '-'.
func (ed *editor) leadingStart(src *snode, k int) int {
	top := 0
	if k > 0 {
		top = ed.l.lineEnd(src.kids[k-1].end)
	}
	col := ed.column(src.dash[k])
	return ed.linesAbove(ed.l.lineStart(src.dash[k]), top, func(line string) bool {
		trimmed := strings.TrimLeft(line, " ")
		return trimmed == "" || strings.HasPrefix(trimmed, "#") && len(line)-len(trimmed) <= col
	})
}

// trailingEnd is the end of the lines after item k of the block list src
// that belong to it: up to its last comment indented past its '-'.
func (ed *editor) trailingEnd(src *snode, k int) int {
	end := ed.l.lineEnd(src.kids[k].end)
	col, next := ed.column(src.dash[k]), end // next: the end of each line after it
	for line := range strings.Lines(ed.text[end:]) {
		next += len(line)
		line = strings.TrimRight(line, "\r\n")
		trimmed := strings.TrimLeft(line, " ")
		switch {
		case trimmed == "":
		case strings.HasPrefix(trimmed, "#") && len(line)-len(trimmed) > col:
			end = next
		default:
			return end
		}
	}
	return end
}

// paste writes item j of the list n, moved there from another list.
func (ed *editor) paste(n *enode, j int) error {
	src, it := n.src, n.kids[j].val
	next, prev := neighbours(n.kids, j)
	if src.flow {
		return ed.pasteFlow(src, it, next, prev)
	}
	text, err := ed.itemText(it, false, ed.column(src.dash[0]))
	if err != nil {
		return err
	}
	var at int
	switch {
	case prev >= 0:
		at = ed.trailingEnd(src, prev)
	case next >= 0:
		at = ed.leadingStart(src, next)
	default:
		return refuse(ed.lineAt(src.start), "a list whose every item moves", "keep one item in it, or write it in flow style ([ ])")
	}
	if at == len(ed.text) && !strings.HasSuffix(ed.text, "\n") {
		text = ed.st.nl + strings.TrimSuffix(text, ed.st.nl)
	}
	ed.add(at, at, text)
	return nil
}

// itemText is the source text of the moved item it, with the changes
// made to it, for a list in flow style (flow) or block style, whose
// items start at column col: in a block list whole lines, '-' and all.
func (ed *editor) itemText(it *enode, flow bool, col int) (string, error) {
	o, s := ed.away[it.src], it.src
	lo, hi := s.start, s.end
	switch {
	case !o.list.flow && !flow:
		lo, hi = ed.leadingStart(o.list, o.index), ed.trailingEnd(o.list, o.index)
	case !o.list.flow && !s.flow:
		return "", refuse(ed.lineAt(s.start), "a container in block style that moves into a flow list ([ ])", "write that list in block style, or leave it out when it is empty")
	}
	text, err := ed.edited(it, lo, hi)
	if err != nil {
		return "", err
	}
	switch {
	case !o.list.flow && !flow:
		text = strings.TrimPrefix(ed.shift("\n"+text, col-ed.column(o.list.dash[o.index])), "\n")
		if !strings.HasSuffix(text, "\n") {
			text += ed.st.nl // it was the last line, without a line break
		}
		return text, nil
	case !flow:
		return strings.Repeat(" ", col) + "- " + ed.shift(text, col+2-ed.column(s.start)) + ed.st.nl, nil
	}
	return ed.shift(text, col-ed.column(s.start)), nil
}

// edited is the source text [lo, hi) of the moved item it with the
// changes made to it (diff, into edits of their own).
func (ed *editor) edited(it *enode, lo, hi int) (string, error) {
	saved, final := ed.edits, ed.noFinalNewline
	defer func() { ed.edits, ed.noFinalNewline = saved, final }()
	ed.edits = nil
	if err := ed.diff(it); err != nil {
		return "", err
	}
	text, bad := splice(ed.text, lo, hi, ed.edits)
	if bad >= 0 {
		return "", refuse(ed.lineAt(bad), "a change of a moved item outside its lines", "write the item in block style, one key a line")
	}
	return text, nil
}

// pasteFlow writes the moved item it into the flow list src (or JSON),
// before the kept item next or after prev, with the list's separator.
func (ed *editor) pasteFlow(src *snode, it *enode, next, prev int) error {
	sep := ed.flowSep(src)
	indent := ed.indentOf(src.start, ed.indentChar()) + ed.st.step
	if len(src.kids) > 0 {
		indent = ed.column(src.kids[0].start)
	}
	text, err := ed.itemText(it, true, indent)
	if err != nil {
		return err
	}
	switch {
	case next >= 0:
		ed.add(src.kids[next].start, src.kids[next].start, text+sep)
	case prev >= 0:
		ed.add(src.kids[prev].end, src.kids[prev].end, sep+text)
	case len(src.kids) == 0:
		if ed.st.json && !ed.st.single && src.end-src.start == 2 { // [], nothing between
			text = ed.st.nl + ed.pad(indent) + text + ed.st.nl + ed.pad(ed.indentOf(src.start, ed.indentChar()))
		}
		ed.add(src.end-1, src.end-1, text)
	default:
		return refuse(ed.lineAt(src.start), "a flow list whose every item moves", "write it in block style")
	}
	return nil
}

// flowSep is what separates the items of the flow list src: what is
// between its first two items; for an item on a line of its own, a line
// break and its indentation; otherwise what the document's other flow
// collections use (", " when it has none).
func (ed *editor) flowSep(src *snode) string {
	switch {
	case src != nil && len(src.kids) > 1:
		return ed.text[src.kids[0].end:itemStart(src, 1)]
	case src != nil && len(src.kids) == 1 && ed.indentOf(src.kids[0].start, ed.indentChar()) == ed.column(src.kids[0].start):
		return "," + ed.st.nl + ed.pad(ed.column(src.kids[0].start))
	}
	if sep, ok := firstSep(ed.text, ed.root.src, 0); ok {
		return sep
	}
	return ", "
}

// firstSep is the separator between the first two items of the first
// flow collection under n, in document order, written on one line.
func firstSep(text string, n *snode, depth int) (string, bool) {
	if n == nil || depth > maxDepth {
		return "", false
	}
	if n.flow && len(n.kids) > 1 {
		if sep := text[n.kids[0].end:itemStart(n, 1)]; !strings.Contains(sep, "\n") {
			return sep, true
		}
	}
	for _, k := range n.kids {
		if sep, ok := firstSep(text, k, depth+1); ok {
			return sep, true
		}
	}
	return "", false
}

// indentChar is what indents the document's lines: spaces, or tabs in
// JSON that is indented with them (deriveStyle).
func (ed *editor) indentChar() string {
	if ed.st.tabs {
		return "\t"
	}
	return " "
}

// pad is n columns of indentation.
func (ed *editor) pad(n int) string { return strings.Repeat(ed.indentChar(), max(n, 0)) }

// indentOf is the indentation of the line holding off, in characters ch
// (" ", or the document's indentChar).
func (ed *editor) indentOf(off int, ch string) int {
	line := ed.text[ed.l.lineStart(off):]
	return len(line) - len(strings.TrimLeft(line, ch))
}

// shift indents every line of text but the first by n columns (less
// when n < 0, as far as they are indented), blank lines left as they are.
func (ed *editor) shift(text string, n int) string {
	ch := ed.indentChar()
	lines := strings.Split(text, "\n")
	for i := 1; i < len(lines); i++ {
		switch {
		case n > 0 && strings.TrimSpace(lines[i]) != "":
			lines[i] = ed.pad(n) + lines[i]
		case n < 0:
			indent := len(lines[i]) - len(strings.TrimLeft(lines[i], ch))
			lines[i] = lines[i][min(-n, indent):]
		}
	}
	return strings.Join(lines, "\n")
}
