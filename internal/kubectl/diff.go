// Writing the differences between the changed tree and the source as
// edits of the source's bytes, and applying them.

package kubectl

import (
	"cmp"
	"slices"
	"strings"
)

// finish writes the tree's differences as edits and returns the new text.
func (ed *editor) finish() (string, error) {
	if err := ed.diff(ed.root); err != nil {
		return "", err
	}
	out, bad := splice(ed.text, 0, len(ed.text), ed.edits)
	if bad >= 0 {
		return "", refuse(ed.lineAt(bad), "two changes at one place", "write this part in block style, one key or item a line")
	}
	if ed.noFinalNewline && strings.HasSuffix(out, "\n") {
		out = strings.TrimSuffix(strings.TrimSuffix(out, "\n"), "\r")
	}
	return out, nil
}

func (ed *editor) add(start, end int, text string) {
	ed.edits = append(ed.edits, edit{start, end, text})
}

// splice is text[lo:hi] with the edits made in it, in order of place
// (insertions before a removal at the same place, else in the order
// made); bad is where the first edit starts that overlaps another or
// leaves [lo, hi), or -1.
func splice(text string, lo, hi int, edits []edit) (out string, bad int) {
	slices.SortStableFunc(edits, func(a, b edit) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.end, b.end))
	})
	var b strings.Builder
	pos := lo
	for _, e := range edits {
		if e.start < pos || e.end > hi {
			return "", e.start
		}
		b.WriteString(text[pos:e.start])
		b.WriteString(e.text)
		pos = e.end
	}
	b.WriteString(text[pos:hi])
	return b.String(), -1
}

// diff writes the differences under a source node: the members or items
// removed, added, and changed in those it keeps.
func (ed *editor) diff(n *enode) error {
	if !n.expanded {
		return nil
	}
	src := n.src
	kept := make([]bool, len(src.kids))
	for _, e := range n.kids {
		if e.src >= 0 {
			kept[e.src] = true
		}
	}
	if err := ed.deletions(src, kept, len(n.kids) == 0); err != nil {
		return err
	}
	for j, e := range n.kids {
		if e.src < 0 {
			if err := ed.insertKid(n, j); err != nil {
				return err
			}
			continue
		}
		if e.renamed {
			k := src.keys[e.src]
			ed.add(k.start, k.end, cmp.Or(e.keyText, ed.keyLike(k, e.key)))
		}
		if err := ed.diffValue(e.val, src, e.src); err != nil {
			return err
		}
	}
	return nil
}

// diffValue writes member or item i of parent: a list created for moved
// items, a block list every item moved out of (which is [] again),
// changed below, or replaced.
func (ed *editor) diffValue(v *enode, parent *snode, i int) error {
	switch {
	case v.created:
		return ed.writeCreated(v, parent, i)
	case v.emptied && len(v.kids) == 0 && parent.kind == mapKind && !parent.flow:
		err := ed.diff(v)
		ed.add(parent.colon[i], parent.colon[i], " []")
		return err
	case v.src != nil:
		return ed.diff(v)
	}
	start, text := ed.replacement(v.val, parent, i)
	if v.hasText {
		text = v.text // kept source text, from the same place
	}
	ed.add(start, parent.kids[i].end, text)
	return nil
}

// deletions writes the removal of the members or items of src that are
// not kept; empty says that nothing is left in it (nor added).
func (ed *editor) deletions(src *snode, kept []bool, empty bool) error {
	if src.flow {
		ed.flowDeletions(src, kept, empty)
		return nil
	}
	for i := range src.kids {
		if kept[i] {
			continue
		}
		from := itemStart(src, i)
		if !ed.l.onlySpaceBefore(from) {
			return refuse(ed.lineAt(from), "a key to remove that shares its line with the '-' or key before it", "put it on a line of its own")
		}
		start, to := ed.cutSpan(src, i, ed.l.lineStart(from), ed.l.lineEnd(src.kids[i].end))
		if to == len(ed.text) && !strings.HasSuffix(ed.text, "\n") {
			// The last line has no newline: neither will the line
			// that becomes last (the one before may go too).
			ed.noFinalNewline = true
		}
		ed.add(start, to, "")
	}
	return nil
}

// flowDeletions removes each run of items of a flow collection that are
// not kept, with the separators between them and the kept ones.
func (ed *editor) flowDeletions(src *snode, kept []bool, empty bool) {
	n := len(src.kids)
	for i := 0; i < n; i++ {
		if kept[i] {
			continue
		}
		j := i // the run is i..j
		for j+1 < n && !kept[j+1] {
			j++
		}
		switch {
		case j+1 < n:
			ed.add(itemStart(src, i), itemStart(src, j+1), "")
		case i > 0:
			ed.add(src.kids[i-1].end, src.kids[j].end, "")
		case empty && ed.onlyLayoutAround(src):
			ed.add(src.start+1, src.end-1, "") // the lines fillEmpty opened
		default:
			ed.add(itemStart(src, i), src.kids[j].end, "")
		}
		i = j
	}
}

// onlyLayoutAround says whether what is around the items of the flow
// collection src, inside its brackets, is line breaks and indentation
// only: the layout of items on their own lines, which goes with them.
func (ed *editor) onlyLayoutAround(src *snode) bool {
	around := ed.text[src.start+1:itemStart(src, 0)] + ed.text[src.kids[len(src.kids)-1].end:src.end-1]
	return strings.TrimSpace(around) == "" && strings.Contains(around, "\n")
}
