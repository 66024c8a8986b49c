// A list created for moved items (an add of [], or the [] of block
// YAML), written whole with the items' source text.

package kubectl

import (
	"errors"
	"strings"
)

// insertCreated writes member j of the mapping n: a list created for
// moved items.
func (ed *editor) insertCreated(n *enode, j int) error {
	e := n.kids[j]
	next, prev := neighbours(n.kids, j)
	var err error
	ierr := ed.insert(n.src, next, prev, j, len(n.kids), func(indent int) string {
		var text string
		if text, err = ed.created(e.val, n.src, indent); ed.st.json || n.src.flow {
			text = " " + text
		}
		return ed.st.key(e.key) + ":" + text
	})
	return errors.Join(err, ierr)
}

// writeCreated writes the created list v where the value of member i of
// parent was (null, or []).
func (ed *editor) writeCreated(v *enode, parent *snode, i int) error {
	old := parent.kids[i]
	if parent.kind != mapKind {
		return refuse(ed.lineAt(old.start), "a list created inside a list", "write it out")
	}
	key := parent.keys[i].start
	start, indent := old.start, ed.indentOf(key, ed.indentChar()) // flow: the value
	if !ed.st.json && !parent.flow {
		start, indent = parent.colon[i], ed.column(key) // block: all after "key:"
	}
	text, err := ed.created(v, parent, indent)
	ed.add(start, old.end, text)
	return err
}

// created writes the created list n, a member of the mapping m. In block
// YAML, whose key is at column indent, as the lines below the key: each
// after a line break, their '-' where m's lists have theirs. Otherwise in
// flow style, or pretty JSON under a key indented indent.
func (ed *editor) created(n *enode, m *snode, indent int) (string, error) {
	flow, pretty := ed.st.json || m.flow, ed.st.json && !ed.st.single
	col := indent
	if pretty || !flow && ed.styleIn(m).seqIn {
		col += ed.st.step
	}
	items := make([]string, len(n.kids))
	for i, e := range n.kids {
		var err error
		switch {
		case e.val.src != nil:
			items[i], err = ed.itemText(e.val, flow, col)
		case flow:
			items[i] = ed.st.flow(e.val.val, col)
		default:
			items[i] = strings.Repeat(" ", col) + "-" + ed.st.item(e.val.val, col) + ed.st.nl
		}
		if err != nil {
			return "", err
		}
	}
	switch {
	case !flow:
		return ed.st.nl + strings.TrimSuffix(strings.Join(items, ""), ed.st.nl), nil
	case !pretty || len(items) == 0:
		return "[" + strings.Join(items, ed.flowSep(nil)) + "]", nil
	}
	pad := ed.st.nl + ed.pad(col)
	return "[" + pad + strings.Join(items, ","+pad) + ed.st.nl + ed.pad(indent) + "]", nil
}
