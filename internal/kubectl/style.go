// The document's style (deriveStyle) and the indentation of what goes in.

package kubectl

import "strings"

// indent is where the items of n are indented: its column, or its
// opening bracket's line's and a step.
func (ed *editor) indent(n *node) int {
	if n.col >= 0 {
		return n.col
	}
	return ed.indentOf(n.at) + ed.st.step
}

// pad is n columns of indentation (tabs in JSON indented with them).
func (s style) pad(n int) string {
	if s.tabs {
		return strings.Repeat("\t", max(n, 0))
	}
	return strings.Repeat(" ", max(n, 0))
}

// shift indents every non-blank line of text but the first by n columns
// (n < 0: as far as they are indented).
func (s style) shift(text string, n int) string {
	if n == 0 || !strings.Contains(text, "\n") {
		return text
	}
	lines := strings.Split(text, "\n")
	for i := 1; i < len(lines); i++ {
		switch {
		case n > 0 && strings.TrimSpace(lines[i]) != "":
			lines[i] = s.pad(n) + lines[i]
		case n < 0:
			indent := len(lines[i]) - len(strings.TrimLeft(lines[i], s.pad(1)))
			lines[i] = lines[i][min(-n, indent):]
		}
	}
	return strings.Join(lines, "\n")
}

// styleIn is the style for new values of a block mapping: lists
// indented as its own were.
func (ed *editor) styleIn(m *node) style {
	st := ed.st
	if m.lists != 0 {
		st.seqIn = m.lists > 0
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
