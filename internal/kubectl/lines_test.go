package kubectl

import (
	"testing"
	"unicode/utf8"
)

// TestOffset: yaml.v3's lines and columns (characters, from 1) become
// byte offsets, whatever order they are asked in: the last one found is
// where the next one on its line is counted from.
func TestOffset(t *testing.T) {
	text := "a: b\nnamé: [x, é, \"ü\", y]\r\nc\u2028dé: e\u0085f\n"
	// Every character's line and column, as yaml.v3 counts them.
	type pos struct{ line, col, off int }
	var all []pos
	line, col := 1, 1
	for off := 0; off < len(text); {
		all = append(all, pos{line, col, off})
		if n := yamlBreak(text[off:]); n > 0 {
			line, col, off = line+1, 1, off+n
			continue
		}
		_, size := utf8.DecodeRuneInString(text[off:])
		col, off = col+1, off+size
	}
	check := func(order []pos) {
		l := &lines{text: text}
		for _, p := range order {
			if got := l.offset(p.line, p.col); got != p.off {
				t.Fatalf("offset(%d, %d) = %d, want %d", p.line, p.col, got, p.off)
			}
		}
	}
	check(all)
	reversed := make([]pos, len(all))
	for i, p := range all {
		reversed[len(all)-1-i] = p
	}
	check(reversed)
	for i := range all { // each after its neighbour on the right
		check([]pos{all[(i+1)%len(all)], all[i]})
	}
}
