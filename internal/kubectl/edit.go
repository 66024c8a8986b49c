// long because it is the one place that turns inject's changes into edits
// of source bytes: applying JSON Patch operations to a tree of the
// document, then writing each difference where its bytes are, in YAML
// block or flow style or JSON, and nothing else.

package kubectl

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/job-signal/job-signal/inject"
)

// enode is a node of the document as the operations change it: a node of
// the source (src), or a new value to write (val, or its kept text).
type enode struct {
	src      *snode
	val      any
	text     string // kept source text to write instead of val
	hasText  bool
	expanded bool
	entries  []*entry // a mapping's, in order
	items    []*enode // a sequence's, in order
}

type entry struct {
	key     string
	src     int // index in src.keys; -1 when new
	renamed bool
	keyText string // kept source text of a renamed key
	val     *enode
}

func (e *enode) expand() {
	if e.expanded || e.src == nil {
		return
	}
	e.expanded = true
	for i, k := range e.src.keys {
		e.entries = append(e.entries, &entry{key: k.str, src: i, val: &enode{src: e.src.kids[i]}})
	}
	if e.src.kind == seqKind {
		for _, c := range e.src.kids {
			e.items = append(e.items, &enode{src: c})
		}
	}
}

// editor applies operations to one document's text.
type editor struct {
	text  string
	first int // the line of the input the text starts on
	l     *lines
	root  *enode
	st    style
	kept  map[string]string // source texts the record must keep, by place
	edits []edit
	// moved are the words of a list an op replaced, which later ops may
	// put elsewhere (a command's words going in front of args): they keep
	// their source text there.
	moved []movedWord
	// noFinalNewline: the text's last line, which has no newline, is
	// removed; the line that becomes last loses its newline.
	noFinalNewline bool
}

type movedWord struct {
	value, text string
	style       yaml.Style
	col         int // the column of its "-" (block lists)
}

type edit struct {
	start, end int
	text       string
	seq        int
}

func newEditor(d *document, root *snode) *editor {
	text := d.raw
	// Lines of the whole input: JSON documents start with the space
	// after the one before.
	first := d.line - strings.Count(text[:len(text)-len(strings.TrimLeft(text, " \t\r\n"))], "\n")
	l := newLines(text)
	return &editor{text: text, first: first, l: l, root: &enode{src: root}, st: deriveStyle(l, root, d.json), kept: map[string]string{}}
}

// lineAt is the line of the whole input that holds off.
func (ed *editor) lineAt(off int) int { return ed.first + strings.Count(ed.text[:off], "\n") }

// deriveStyle reads how the document indents, ends lines and quotes.
func deriveStyle(l *lines, root *snode, json bool) style {
	text := l.text
	s := style{json: json, step: 2, nl: "\n", seqIn: false}
	if strings.Contains(text, "\r\n") {
		s.nl = "\r\n"
	}
	if json {
		s.single = !strings.Contains(strings.TrimSpace(text), "\n")
		if len(root.kids) > 0 && root.kind == mapKind {
			k := root.keys[0]
			if ind := k.start - l.lineStart(k.start); ind > 0 {
				s.step = ind
			}
		}
		return s
	}
	var walk func(n *snode, depth int)
	foundStep, foundSeq := false, false
	walk = func(n *snode, depth int) {
		if depth > 20 || n.flow {
			return
		}
		for i, v := range n.kids {
			if n.kind == mapKind && !v.flow && len(v.kids) > 0 {
				keyCol := n.keys[i].start - l.lineStart(n.keys[i].start)
				switch v.kind {
				case mapKind:
					if !foundStep {
						if d := v.keys[0].start - l.lineStart(v.keys[0].start) - keyCol; d > 0 {
							s.step, foundStep = d, true
						}
					}
				case seqKind:
					if !foundSeq && len(v.dash) > 0 {
						s.seqIn, foundSeq = v.dash[0]-l.lineStart(v.dash[0]) > keyCol, true
					}
				}
			}
			walk(v, depth+1)
		}
	}
	walk(root, 0)
	return s
}

// resolve walks tokens from the root; it expands source nodes on the way.
func (ed *editor) resolve(tokens []string) (*enode, error) {
	n := ed.root
	for _, t := range tokens {
		n.expand()
		switch {
		case n.src == nil:
			return nil, fmt.Errorf("%w: a change inside a value added by another", errCannotEdit)
		case n.src.kind == mapKind:
			e := n.find(t)
			if e == nil {
				return nil, fmt.Errorf("no member %q", t)
			}
			n = e.val
		case n.src.kind == seqKind:
			i, err := strconv.Atoi(t)
			if err != nil || i < 0 || i >= len(n.items) {
				return nil, fmt.Errorf("no item %q", t)
			}
			n = n.items[i]
		default:
			return nil, fmt.Errorf("%q: not a mapping or a list", t)
		}
	}
	n.expand()
	return n, nil
}

// keys are the member keys of a mapping, in order.
func (n *enode) keys() []string {
	keys := make([]string, len(n.entries))
	for i, e := range n.entries {
		keys[i] = e.key
	}
	return keys
}

func (n *enode) find(key string) *entry {
	for _, e := range n.entries {
		if e.key == key {
			return e
		}
	}
	return nil
}

// apply applies one operation to the tree.
func (ed *editor) apply(op inject.Op) error {
	tokens := inject.Tokens(op.Path)
	if len(tokens) == 0 {
		return fmt.Errorf("%s: the whole document cannot change", op.Path)
	}
	parent, err := ed.resolve(tokens[:len(tokens)-1])
	if err != nil {
		return fmt.Errorf("%s %s: %w", op.Op, op.Path, err)
	}
	last := tokens[len(tokens)-1]
	if parent.src == nil || parent.src.kind == scalarKind {
		return fmt.Errorf("%s %s: %w", op.Op, op.Path, errCannotEdit)
	}
	isMap := parent.src.kind == mapKind
	fresh := &enode{val: op.Value}
	fresh.text, fresh.hasText = ed.textFor(op.Text)
	switch op.Op {
	case "add", "replace":
		if isMap {
			if e := parent.find(last); e != nil {
				ed.keep(op.Keep, parent, e)
				ed.remember(e.val)
				e.val = fresh
				return nil
			}
			if op.Op == "replace" {
				return fmt.Errorf("replace %s: no such member", op.Path)
			}
			parent.entries = slices.Insert(parent.entries, inject.FieldIndex(parent.keys(), last), &entry{key: last, src: -1, val: fresh})
			return nil
		}
		if last == "-" {
			parent.items = append(parent.items, fresh)
			return nil
		}
		i, err := strconv.Atoi(last)
		if err != nil || i < 0 || i > len(parent.items) || op.Op == "replace" && i == len(parent.items) {
			return fmt.Errorf("%s %s: no such index", op.Op, op.Path)
		}
		if op.Op == "replace" {
			parent.items[i] = fresh
		} else {
			parent.items = slices.Insert(parent.items, i, fresh)
		}
	case "remove":
		if isMap {
			i := slices.IndexFunc(parent.entries, func(e *entry) bool { return e.key == last })
			if i < 0 {
				return fmt.Errorf("remove %s: no such member", op.Path)
			}
			parent.entries = slices.Delete(parent.entries, i, i+1)
			return nil
		}
		i, err := strconv.Atoi(last)
		if err != nil || i < 0 || i >= len(parent.items) {
			return fmt.Errorf("remove %s: no such index", op.Path)
		}
		parent.items = slices.Delete(parent.items, i, i+1)
	case "move":
		from := inject.Tokens(op.From)
		if !isMap || len(from) != len(tokens) || !slices.Equal(from[:len(from)-1], tokens[:len(tokens)-1]) || parent.find(last) != nil {
			return fmt.Errorf("move %s to %s: %w (only a rename within an object)", op.From, op.Path, errCannotEdit)
		}
		e := parent.find(from[len(from)-1])
		if e == nil {
			return fmt.Errorf("move %s: no such member", op.From)
		}
		if e.src >= 0 {
			ed.keepKey(op.Keep, parent.src.keys[e.src])
		}
		e.key, e.renamed = last, true
		e.keyText, _ = ed.textFor(op.Text)
	default:
		return fmt.Errorf("unknown operation %q", op.Op)
	}
	return nil
}

// remember notes the words of a source list about to be replaced.
func (ed *editor) remember(old *enode) {
	src := old.src
	if src == nil || src.kind != seqKind {
		return
	}
	for i, w := range src.kids {
		if w.kind != scalarKind || w.y != nil && w.y.ShortTag() != "!!str" || w.y == nil && ed.text[w.start] != '"' {
			continue
		}
		mw := movedWord{value: w.str, text: ed.text[w.start:w.end], style: w.style}
		if !src.flow {
			mw.col = ed.column(src.dash[i])
		}
		ed.moved = append(ed.moved, mw)
	}
}

// movedText is the source text of a moved word v for a new item of a
// list (flow or block at dash column col), when it can stand there.
func (ed *editor) movedText(v any, flow bool, col int) (string, bool) {
	word, ok := v.(string)
	if !ok {
		return "", false
	}
	for i, w := range ed.moved {
		if w.value != word {
			continue
		}
		text := w.text
		switch block := w.style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0; {
		case ed.st.json:
		case flow && (block || strings.Contains(text, "\n") || w.style == 0 && !safePlain(word, true)):
			return "", false
		case block:
			text = shiftLines(text, col-w.col)
		}
		ed.moved = slices.Delete(ed.moved, i, i+1)
		return text, true
	}
	return "", false
}

// shiftLines indents every line of text but the first by shift columns.
func shiftLines(text string, shift int) string {
	lines := strings.Split(text, "\n")
	for i := 1; i < len(lines); i++ {
		switch {
		case shift > 0 && strings.TrimSpace(lines[i]) != "":
			lines[i] = strings.Repeat(" ", shift) + lines[i]
		case shift < 0:
			lines[i] = lines[i][min(-shift, len(lines[i])-len(strings.TrimLeft(lines[i], " "))):]
		}
	}
	return strings.Join(lines, "\n")
}

// peekKeep notes, before op is applied, the source text it will replace
// (see keep).
func (ed *editor) peekKeep(op inject.Op) {
	tokens := inject.Tokens(op.Path)
	if op.Keep == "" || len(tokens) == 0 || op.Op != "add" && op.Op != "replace" {
		return
	}
	parent, err := ed.resolve(tokens[:len(tokens)-1])
	if err != nil || parent.src == nil || parent.src.kind != mapKind {
		return
	}
	if e := parent.find(tokens[len(tokens)-1]); e != nil {
		ed.keep(op.Keep, parent, e)
	}
}

// textFor is a kept source text when it is of this document's format.
func (ed *editor) textFor(kept string) (string, bool) {
	return strings.CutPrefix(kept, ed.formatPrefix())
}

// finish writes the tree's differences as edits and returns the new text.
func (ed *editor) finish() (string, error) {
	if err := ed.diff(ed.root); err != nil {
		return "", err
	}
	sort.SliceStable(ed.edits, func(i, j int) bool {
		if ed.edits[i].start != ed.edits[j].start {
			return ed.edits[i].start < ed.edits[j].start
		}
		if ed.edits[i].end != ed.edits[j].end {
			return ed.edits[i].end < ed.edits[j].end // insertions before a removal there
		}
		return ed.edits[i].seq < ed.edits[j].seq
	})
	var b strings.Builder
	pos := 0
	for _, e := range ed.edits {
		if e.start < pos {
			return "", refuse(ed.lineAt(e.start), "two changes at one place", "write this part in block style, one key or item a line")
		}
		b.WriteString(ed.text[pos:e.start])
		b.WriteString(e.text)
		pos = e.end
	}
	b.WriteString(ed.text[pos:])
	out := b.String()
	if ed.noFinalNewline && strings.HasSuffix(out, "\n") {
		out = strings.TrimSuffix(strings.TrimSuffix(out, "\n"), "\r")
	}
	return out, nil
}

func (ed *editor) add(start, end int, text string) {
	ed.edits = append(ed.edits, edit{start, end, text, len(ed.edits)})
}

// diff writes the differences under a source node.
func (ed *editor) diff(n *enode) error {
	if !n.expanded {
		return nil
	}
	if n.src.kind == mapKind {
		return ed.diffMap(n)
	}
	return ed.diffSeq(n)
}

func (ed *editor) diffMap(n *enode) error {
	src := n.src
	kept := map[int]bool{}
	for _, e := range n.entries {
		if e.src >= 0 {
			kept[e.src] = true
		}
	}
	if err := ed.deletions(src, kept, len(n.entries) == 0); err != nil {
		return err
	}
	for j, e := range n.entries {
		if e.src < 0 {
			if err := ed.insertEntry(n, j); err != nil {
				return err
			}
			continue
		}
		if e.renamed {
			k := src.keys[e.src]
			text := e.keyText
			if text == "" {
				text = ed.keyLike(k, e.key)
			}
			ed.add(k.start, k.end, text)
		}
		if err := ed.diffValue(e.val, src.kids[e.src], src, e.src); err != nil {
			return err
		}
	}
	return nil
}

func (ed *editor) diffSeq(n *enode) error {
	src := n.src
	kept := map[int]bool{}
	for _, it := range n.items {
		if i := slices.Index(src.kids, it.src); it.src != nil && i >= 0 {
			kept[i] = true
		}
	}
	if err := ed.deletions(src, kept, len(n.items) == 0); err != nil {
		return err
	}
	for j, it := range n.items {
		if it.src == nil {
			if err := ed.insertItem(n, j); err != nil {
				return err
			}
			continue
		}
		i := slices.Index(src.kids, it.src)
		if err := ed.diffValue(it, src.kids[i], src, -1); err != nil {
			return err
		}
	}
	return nil
}

// diffValue writes a member's or item's value: replaced, or changed below.
// keyIndex is the member's index in parent, or -1 for an item.
func (ed *editor) diffValue(v *enode, old, parent *snode, keyIndex int) error {
	if v.src != nil {
		return ed.diff(v)
	}
	if v.hasText { // kept source text: from just after "key:" in block style
		start := old.start
		if !ed.st.json && !parent.flow && keyIndex >= 0 {
			start = parent.colon[keyIndex]
		}
		ed.add(start, old.end, v.text)
		return nil
	}
	text := ed.render(v.val, parent, keyIndex, old)
	start := old.start
	switch {
	case ed.st.json || parent.flow:
	case keyIndex >= 0:
		start = parent.colon[keyIndex] // "key:" then the new value
		if !strings.HasPrefix(text, ed.st.nl) {
			text = " " + text
		}
	case old.start == old.end || strings.HasPrefix(text, ed.st.nl):
		start = old.start
		if !strings.HasPrefix(text, ed.st.nl) {
			text = " " + text
		}
	}
	ed.add(start, old.end, text)
	return nil
}

// render writes a new value for a member (keyIndex) or item (-1) of
// parent, where old stood; without the space after "key:" or "-".
func (ed *editor) render(v any, parent *snode, keyIndex int, old *snode) string {
	switch {
	case ed.st.json:
		return ed.st.pretty(v, ed.lineIndent(old.start))
	case parent.flow:
		return ed.st.flow(v)
	case keyIndex >= 0:
		return strings.TrimPrefix(ed.styleIn(parent).block(v, ed.column(parent.keys[keyIndex].start)), " ")
	}
	i := slices.Index(parent.kids, old)
	return strings.TrimPrefix(ed.st.item(v, ed.column(parent.dash[i])), " ")
}

// keyLike writes key quoted as the source key k is: renaming "command"
// gives "args", and renaming it back gives "command" again.
func (ed *editor) keyLike(k *snode, key string) string {
	switch {
	case ed.st.json:
	case k.style&yaml.DoubleQuotedStyle != 0:
		return doubleQuoted(key)
	case k.style&yaml.SingleQuotedStyle != 0 && !strings.Contains(key, "'") && printable(key):
		return "'" + key + "'"
	}
	return ed.st.key(key)
}

// keepKey notes the source text of a key about to be renamed when
// renaming it back would not spell it the same (escapes).
func (ed *editor) keepKey(place string, k *snode) {
	if text := ed.text[k.start:k.end]; place != "" && ed.keyLike(k, k.str) != text {
		ed.kept[place] = ed.formatPrefix() + text
	}
}

// formatPrefix marks a kept text with the document's format.
func (ed *editor) formatPrefix() string {
	if ed.st.json {
		return "json:"
	}
	return "yaml:"
}

// keep notes the source text of a value about to be replaced when
// writing its value back would not give the same bytes.
func (ed *editor) keep(place string, parent *enode, e *entry) {
	if place == "" || e.val.src == nil || e.src < 0 {
		return
	}
	old := e.val.src
	block := !ed.st.json && !parent.src.flow
	from := old.start
	if block {
		from = parent.src.colon[e.src]
	}
	src := ed.text[from:old.end]
	var meaning any
	if old.kind != scalarKind || old.y == nil || old.y.ShortTag() != "!!null" {
		js, err := jsonOf(ed.text, old)
		if err != nil {
			return
		}
		meaning = decodeJSON(js)
	}
	rendered := ed.render(meaning, parent.src, e.src, old)
	if block && !strings.HasPrefix(rendered, ed.st.nl) {
		rendered = " " + rendered
	}
	if rendered == src {
		return
	}
	ed.kept[place] = ed.formatPrefix() + src
}

func (ed *editor) column(off int) int { return off - ed.l.lineStart(off) }

func (ed *editor) lineIndent(off int) int {
	line := ed.text[ed.l.lineStart(off):]
	return len(line) - len(strings.TrimLeft(line, " "))
}

// deletions writes the removal of the members or items of src that are
// not kept.
// empty says that nothing is left in it (nor added).
func (ed *editor) deletions(src *snode, kept map[int]bool, empty bool) error {
	start := func(i int) int { return itemStart(src, i) }
	if !src.flow {
		for i := range src.kids {
			if kept[i] {
				continue
			}
			from := start(i)
			if !ed.l.onlySpaceBefore(from) {
				return refuse(ed.lineAt(from), "a key to remove that shares its line with the '-' or key before it", "put it on a line of its own")
			}
			from, to := ed.l.lineStart(from), ed.l.lineEnd(src.kids[i].end)
			if to == len(ed.text) && !strings.HasSuffix(ed.text, "\n") {
				// The last line has no newline: neither will the line
				// that becomes last (the one before may go too).
				ed.noFinalNewline = true
			}
			ed.add(from, to, "")
		}
		return nil
	}
	n := len(src.kids)
	for i := 0; i < n; {
		if kept[i] {
			i++
			continue
		}
		j := i
		for j+1 < n && !kept[j+1] {
			j++
		}
		switch {
		case j+1 < n:
			ed.add(start(i), start(j+1), "")
		case i > 0:
			ed.add(src.kids[i-1].end, src.kids[j].end, "")
		case empty && ed.onlyLayoutAround(src):
			ed.add(src.start+1, src.end-1, "") // the lines fillEmpty opened
		default:
			ed.add(start(i), src.kids[j].end, "")
		}
		i = j + 1
	}
	return nil
}

// onlyLayoutAround says whether what is around the items of the flow
// collection src, inside its brackets, is line breaks and indentation
// only: the layout of items on their own lines, which goes with them.
func (ed *editor) onlyLayoutAround(src *snode) bool {
	around := ed.text[src.start+1:itemStart(src, 0)] + ed.text[src.kids[len(src.kids)-1].end:src.end-1]
	return strings.TrimSpace(around) == "" && strings.Contains(around, "\n")
}

// neighbours finds the kept source members or items around position j of
// a changed list: the index in src of the next one after j and of the
// last one before it (-1 when none).
func neighbours(srcIndex func(k int) int, count, j int) (next, prev int) {
	next, prev = -1, -1
	for k := j + 1; k < count; k++ {
		if i := srcIndex(k); i >= 0 {
			next = i
			break
		}
	}
	for k := j - 1; k >= 0; k-- {
		if i := srcIndex(k); i >= 0 {
			prev = i
			break
		}
	}
	return next, prev
}

func (ed *editor) insertEntry(n *enode, j int) error {
	e := n.entries[j]
	src := n.src
	next, prev := neighbours(func(k int) int { return n.entries[k].src }, len(n.entries), j)
	return ed.insert(src, next, prev, j, len(n.entries), func(indent int) string {
		switch {
		case ed.st.json:
			return ed.st.key(e.key) + ": " + firstLine(e.val.text, ed.st.pretty(e.val.val, indent))
		case src.flow:
			return ed.st.key(e.key) + ": " + firstLine(e.val.text, ed.st.flow(e.val.val))
		}
		return ed.st.key(e.key) + ":" + ed.styleIn(src).block(e.val.val, indent)
	})
}

func (ed *editor) insertItem(n *enode, j int) error {
	it := n.items[j]
	src := n.src
	next, prev := neighbours(func(k int) int {
		if n.items[k].src == nil {
			return -1
		}
		return slices.Index(src.kids, n.items[k].src)
	}, len(n.items), j)
	return ed.insert(src, next, prev, j, len(n.items), func(indent int) string {
		if text, ok := ed.movedText(it.val, src.flow, indent); ok {
			if !ed.st.json && !src.flow {
				return "- " + text
			}
			return text
		}
		switch {
		case ed.st.json:
			return ed.st.pretty(it.val, indent)
		case src.flow:
			return ed.st.flow(it.val)
		}
		return "-" + ed.st.item(it.val, indent)
	})
}

func firstLine(kept, rendered string) string {
	if kept != "" {
		return kept
	}
	return rendered
}

// insert writes a new member or item (text, given its indentation) before
// the kept one at next, or after the one at prev. j is its position among
// the count members or items the collection has now: an empty flow
// collection gets all of them, so the first opens it, the others follow
// it with a separator, and the last closes it.
func (ed *editor) insert(src *snode, next, prev, j, count int, text func(indent int) string) error {
	startOf := func(i int) int { return itemStart(src, i) }
	nl := ed.st.nl
	if src.flow {
		multiline := ed.st.json && !ed.st.single && strings.Contains(ed.text[src.start:src.end], "\n")
		sep := ", "
		indent := 0
		if len(src.kids) > 0 {
			indent = ed.lineIndent(startOf(0))
		} else {
			indent = ed.lineIndent(src.start) + ed.st.step
		}
		if multiline {
			sep = "," + nl + strings.Repeat(" ", indent)
		}
		switch {
		case next >= 0:
			ed.add(startOf(next), startOf(next), text(indent)+sep)
		case prev >= 0:
			ed.add(src.kids[prev].end, src.kids[prev].end, sep+text(indent))
		case len(src.kids) == 0:
			ed.fillEmpty(src, j, count, indent, text(indent))
		default:
			return refuse(ed.lineAt(src.start), "a flow collection whose every item is replaced", "write it in block style")
		}
		return nil
	}
	col := ed.column(startOf(0))
	if next >= 0 && ed.l.onlySpaceBefore(startOf(next)) {
		at := ed.commentsAbove(ed.l.lineStart(startOf(next)))
		ed.add(at, at, strings.Repeat(" ", col)+text(col)+nl)
		return nil
	}
	if prev < 0 {
		prev = next
	}
	if prev < 0 {
		return refuse(ed.lineAt(src.start), "a collection whose every item is replaced", "write it in flow style ([ ] or { })")
	}
	at := ed.l.lineEnd(src.kids[prev].end)
	if at == len(ed.text) && !strings.HasSuffix(ed.text, "\n") {
		ed.add(at, at, nl+strings.Repeat(" ", col)+text(col))
		return nil
	}
	ed.add(at, at, strings.Repeat(" ", col)+text(col)+nl)
	return nil
}

// fillEmpty writes the new item j of count into the empty flow collection
// src, in order, before its closing bracket; pretty JSON puts each on its
// own line, and the closing bracket on the line after the last.
func (ed *editor) fillEmpty(src *snode, j, count, indent int, text string) {
	inner := ed.text[src.start+1 : src.end-1]
	pretty := ed.st.json && !ed.st.single && inner == ""
	sep, open, closing := ", ", "", ""
	if pretty {
		sep = "," + ed.st.nl + strings.Repeat(" ", indent)
		open = ed.st.nl + strings.Repeat(" ", indent)
		closing = ed.st.nl + strings.Repeat(" ", ed.lineIndent(src.start))
	}
	if j == count-1 {
		text += closing
	}
	if j > 0 {
		text = sep + text
	} else if inner == "" {
		text = open + text
	}
	// Spaces between the brackets stay in front of the items, where
	// removing the items gives them back.
	ed.add(src.end-1, src.end-1, text)
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

// commentsAbove moves a line start up over the comment lines right above
// it, which belong to what follows them.
func (ed *editor) commentsAbove(at int) int {
	for at > 0 {
		prev := ed.l.lineStart(at - 1)
		if !strings.HasPrefix(strings.TrimSpace(ed.text[prev:at]), "#") {
			break
		}
		at = prev
	}
	return at
}
