package inject_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/job-signal/job-signal/inject"
)

// TestOneLine: a message from outside, as either front end writes it, is
// one line of printable text of at most the bound, cut at a character
// boundary.
func TestOneLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"  a\n\tb\r\n  c  ", "a b c"},
		{"a\x00\x1b[31mb", "a [31mb"},
		{"\xff\xfe", ""},
		{strings.Repeat("é", 600), strings.Repeat("é", 510) + "..."},
		{strings.Repeat("x\n", 1<<20), strings.Repeat("x ", 510) + "x..."},
	} {
		got := inject.OneLine(tc.in, inject.MaxReason)
		if got != tc.want {
			t.Errorf("OneLine(%.40q) = %.80q, want %.80q", tc.in, got, tc.want)
		}
		if len(got) > inject.MaxReason || !utf8.ValidString(got) || strings.ContainsAny(got, "\n\r\t") {
			t.Errorf("OneLine(%.40q): %d bytes, valid %v", tc.in, len(got), utf8.ValidString(got))
		}
	}
}
