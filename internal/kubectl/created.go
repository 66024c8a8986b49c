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
		if ed.st.json || n.src.flow {
			text, err = ed.createdFlow(e.val, indent)
			return ed.st.key(e.key) + ": " + text
		}
		text, err = ed.createdBlock(e.val, n.src, indent)
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
	if ed.st.json || parent.flow {
		text, err := ed.createdFlow(v, ed.indentOf(key))
		ed.add(old.start, old.end, text)
		return err
	}
	text, err := ed.createdBlock(v, parent, ed.column(key))
	ed.add(parent.colon[i], old.end, text)
	return err
}

// createdBlock writes the items of the created list n, a member of the
// block mapping m whose key is at column keyCol, as the lines below the
// key: each after a line break, their '-' where m's lists have theirs.
func (ed *editor) createdBlock(n *enode, m *snode, keyCol int) (string, error) {
	col := keyCol
	if ed.styleIn(m).seqIn {
		col += ed.st.step
	}
	var b strings.Builder
	for _, e := range n.kids {
		if e.val.src == nil {
			b.WriteString(strings.Repeat(" ", col) + "-" + ed.st.item(e.val.val, col) + ed.st.nl)
			continue
		}
		text, err := ed.itemText(e.val, false, col)
		if err != nil {
			return "", err
		}
		b.WriteString(text)
	}
	return ed.st.nl + strings.TrimSuffix(b.String(), ed.st.nl), nil
}

// createdFlow writes the created list n in flow style, or pretty JSON
// under a key at column indent.
func (ed *editor) createdFlow(n *enode, indent int) (string, error) {
	pretty := ed.st.json && !ed.st.single
	col := indent
	if pretty {
		col += ed.st.step
	}
	items := make([]string, len(n.kids))
	for i, e := range n.kids {
		if e.val.src == nil {
			items[i] = ed.st.flow(e.val.val, col)
			continue
		}
		text, err := ed.itemText(e.val, true, col)
		if err != nil {
			return "", err
		}
		items[i] = text
	}
	if !pretty || len(items) == 0 {
		return "[" + strings.Join(items, ed.flowSep(nil)) + "]", nil
	}
	pad := ed.st.nl + ed.pad(col)
	return "[" + pad + strings.Join(items, ","+pad) + ed.st.nl + ed.pad(indent) + "]", nil
}
