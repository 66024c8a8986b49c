// Moving a list item to another list of the same document (a sidecar
// from containers to initContainers, and back): the tree side. The item
// keeps its source node, so it is written at its new place as its own
// source text (paste.go), with the changes made to it there.

package kubectl

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/job-signal/job-signal/inject"
)

// origin is where a moved item was in the source: its list and index.
type origin struct {
	list  *snode
	index int
}

// moveBetween applies op when it moves an item from one list to another
// (the others, renames of a member, are apply's); done says it did.
func (ed *editor) moveBetween(op inject.Op) (done bool, err error) {
	from, to := inject.Tokens(op.From), inject.Tokens(op.Path)
	if op.Op != "move" || len(from) == 0 || len(to) == 0 ||
		len(from) == len(to) && slices.Equal(from[:len(from)-1], to[:len(to)-1]) {
		return false, nil
	}
	list, err := ed.resolve(from[:len(from)-1])
	if err != nil || list.src == nil || list.src.kind != seqKind {
		return false, nil // not an item: apply says what it moves
	}
	if err := ed.move(list, from[len(from)-1], to); err != nil {
		return true, fmt.Errorf("move %s to %s: %w", op.From, op.Path, err)
	}
	return true, nil
}

// move moves item index of list to path to.
func (ed *editor) move(list *enode, index string, to []string) error {
	i, err := strconv.Atoi(index)
	if err != nil || i < 0 || i >= len(list.kids) {
		return fmt.Errorf("no item %q", index)
	}
	item := list.kids[i].val
	if item.src == nil {
		return fmt.Errorf("%w: a value added by another change cannot move", errCannotEdit)
	}
	target, err := ed.resolve(to[:len(to)-1])
	if err != nil {
		return err
	}
	if target.src == nil {
		// A new empty list (an add of []) takes moved items: a list
		// without source lines, written whole.
		if l, ok := target.val.([]any); !ok || len(l) > 0 || target.hasText {
			return fmt.Errorf("%w: the target is neither a list of the source nor an empty list just added", errCannotEdit)
		}
		target.src = &snode{kind: seqKind}
		target.expanded, target.created = true, true
	}
	if ed.emptyFlowInBlock(to, target) && !list.src.flow {
		target.created = true // block lines replace its [] (and moving them out gives [] back)
	}
	if target.src.kind != seqKind {
		return fmt.Errorf("%q: not a list", to[len(to)-2])
	}
	at := len(target.kids)
	if last := to[len(to)-1]; last != "-" {
		if at, err = strconv.Atoi(last); err != nil || at < 0 || at > len(target.kids) {
			return fmt.Errorf("no index %q", last)
		}
	}
	if _, seen := ed.away[item.src]; !seen {
		k := slices.Index(list.src.kids, item.src)
		if k < 0 {
			return fmt.Errorf("%w: an item of another list", errCannotEdit)
		}
		ed.away[item.src] = origin{list.src, k}
	}
	list.kids = slices.Delete(list.kids, i, i+1)
	target.kids = slices.Insert(target.kids, at, &entry{src: -1, val: item}) // written by paste
	list.emptied = list.emptied || len(list.kids) == 0 && !list.src.flow
	return nil
}

// emptyFlowInBlock says whether target, at path to, is a [] (as diffValue
// writes it back) that is a member of a block mapping of YAML.
func (ed *editor) emptyFlowInBlock(to []string, target *enode) bool {
	if ed.st.json || len(to) < 2 || !target.src.flow || ed.text[target.src.start:target.src.end] != "[]" {
		return false
	}
	parent, err := ed.resolve(to[:len(to)-2])
	return err == nil && parent.src != nil && parent.src.kind == mapKind && !parent.src.flow
}
