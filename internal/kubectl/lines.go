// Lines of a document's text, as the editor and yaml.v3 count them.

package kubectl

import (
	"strings"
	"unicode/utf8"
)

// lines finds lines in a document's text.
type lines struct {
	text   string
	starts []int // line starts as yaml.v3 counts them, built on first use
	// at is the last offset found, and its line and column: the next one
	// on that line is counted from there (yaml.v3's nodes come in order).
	at, atLine, atCol int
}

// yamlBreak is the length of the line break text starts with, as yaml.v3
// counts lines (YAML 1.1: CR, LF, CRLF, NEL, LS and PS), or 0.
func yamlBreak(text string) int {
	switch {
	case strings.HasPrefix(text, "\r\n"), strings.HasPrefix(text, "\u0085"):
		return 2
	case text[0] == '\n' || text[0] == '\r':
		return 1
	case strings.HasPrefix(text, "\u2028"), strings.HasPrefix(text, "\u2029"):
		return 3
	}
	return 0
}

// offset converts yaml.v3's 1-based line and column (in characters) to a
// byte offset.
func (l *lines) offset(line, col int) int {
	if l.starts == nil { // the first time: where each line starts
		text := l.text
		l.starts = []int{0}
		for i := 0; i < len(text); i++ {
			if c := text[i]; c != '\n' && c != '\r' && c < 0xc2 {
				continue // the common case, cheaply
			}
			if n := yamlBreak(text[i:]); n > 0 {
				l.starts = append(l.starts, i+n)
				i += n - 1
			}
		}
	}
	if line < 1 || line > len(l.starts) {
		return len(l.text)
	}
	off, c := l.starts[line-1], 1
	if line == l.atLine && col >= l.atCol {
		off, c = l.at, l.atCol
	}
	for ; c < col && off < len(l.text); c++ {
		if l.text[off] < utf8.RuneSelf {
			off++
			continue
		}
		_, size := utf8.DecodeRuneInString(l.text[off:])
		off += size
	}
	l.at, l.atLine, l.atCol = off, line, col
	return off
}

// lineStart is the start of the line holding off; lineStop its end, at
// "\r\n", "\n" or a lone "\r" (as YAML and kubectl read them).
func (l *lines) lineStart(off int) int { return strings.LastIndexAny(l.text[:off], "\r\n") + 1 }

func (l *lines) lineStop(off int) int {
	if i := strings.IndexAny(l.text[off:], "\r\n"); i >= 0 {
		return off + i
	}
	return len(l.text)
}

// next is the start and the stop of the line after the one that stops
// at stop.
func (l *lines) next(stop int) (int, int) {
	start := stop + 1
	if strings.HasPrefix(l.text[stop:], "\r\n") {
		start++
	}
	start = min(start, len(l.text))
	return start, l.lineStop(start)
}

// column is off's column in bytes; indentOf its line's indentation.
func (l *lines) column(off int) int { return off - l.lineStart(off) }

func (l *lines) indentOf(off int) int {
	line := l.text[l.lineStart(off):]
	return len(line) - len(strings.TrimLeft(line, " \t"))
}

// own says whether off is the first non-blank of its line.
func (l *lines) own(off int) bool {
	return strings.TrimLeft(l.text[l.lineStart(off):off], " ") == ""
}
