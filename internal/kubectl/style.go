// The document's style, read once (deriveStyle), and the indentation
// new and moved bytes get from it.

package kubectl

import "strings"

// indent is where the items of n are indented: in block style its
// column; in flow style that of the line of its first item, or of its
// opening bracket's and a step.
func (ed *editor) indent(n *node) int {
	if n.col >= 0 {
		return n.col
	}
	return ed.indentOf(n.at) + ed.st.step
}

// indentChar is what indents the document's lines: spaces, or tabs in
// JSON that is indented with them.
func (ed *editor) indentChar() string {
	if ed.st.tabs {
		return "\t"
	}
	return " "
}

// pad is n columns of indentation.
func (ed *editor) pad(n int) string { return strings.Repeat(ed.indentChar(), max(n, 0)) }

// shift indents every line of text but the first by n columns (less
// when n < 0, as far as they are indented), blank lines left as they are.
func (ed *editor) shift(text string, n int) string {
	if n == 0 || !strings.Contains(text, "\n") {
		return text
	}
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

// styleIn is the style for new values of a block mapping: block lists
// indented as its own lists are, when it has any.
func (ed *editor) styleIn(m *node) style {
	st := ed.st
	for _, it := range m.items {
		if v := it.val; v.kind == seqKind && !v.flow && v.at >= 0 && len(v.items) > 0 {
			st.seqIn = v.col > ed.column(it.at)
			break
		}
	}
	return st
}

// deriveStyle reads how the document indents, ends lines and quotes.
func (ed *editor) deriveStyle(json bool) style {
	s := style{json: json, step: 2, nl: "\n"}
	if strings.Contains(ed.text, "\r\n") {
		s.nl = "\r\n"
	}
	root := ed.root
	if json {
		s.single = !strings.Contains(strings.TrimSpace(ed.text), "\n")
		s.tabs = strings.Contains(ed.text, "\n\t")
		if !s.single && root.kind == mapKind && len(root.items) > 0 && ed.column(root.items[0].at) > 0 {
			s.step = ed.column(root.items[0].at)
		}
		return s
	}
	foundStep, foundSeq := false, false
	var walk func(n *node, depth int)
	walk = func(n *node, depth int) {
		if depth > 20 || n.flow || foundStep && foundSeq {
			return
		}
		for _, it := range n.items {
			if v := it.val; n.kind == mapKind && !v.flow && len(v.items) > 0 {
				keyCol := ed.column(it.at)
				switch {
				case v.kind == mapKind && !foundStep && v.col > keyCol:
					s.step, foundStep = v.col-keyCol, true
				case v.kind == seqKind && !foundSeq:
					s.seqIn, foundSeq = v.col > keyCol, true
				}
			}
			walk(it.val, depth+1)
		}
	}
	walk(root, 0)
	return s
}
