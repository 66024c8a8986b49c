package webhook

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestVerdict: a Pod that needs job-signal is denied for now when the
// failure may pass, unless the operator chose Ignore; everything else is
// admitted without job-signal.
func TestVerdict(t *testing.T) {
	for _, tc := range []struct {
		needs, transient bool
		policy           string
		want             outcome
	}{
		{true, true, PolicyFail, denied},
		{true, true, "", denied},
		{true, true, PolicyIgnore, skipped},
		{true, false, PolicyFail, skipped},  // a lasting refusal: retrying would hold the Job up for ever
		{false, true, PolicyFail, skipped},  // one container: completes anyway
		{false, false, PolicyFail, skipped}, // nothing to wait for
	} {
		if got := verdict(tc.needs, tc.transient, tc.policy); got != tc.want {
			t.Errorf("verdict(needs %v, transient %v, %q) = %s, want %s", tc.needs, tc.transient, tc.policy, got, tc.want)
		}
	}
}

// TestOneLine: a reason written into an object is one line of printable
// text, of at most the bound, cut at a character boundary.
func TestOneLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"  a\n\tb\r\n  c  ", "a b c"},
		{"a\x00\x1b[31mb", "a [31mb"},
		{"\xff\xfe", ""},
		{strings.Repeat("é", 600), strings.Repeat("é", 510) + "..."},
		{strings.Repeat("x\n", 1<<20), strings.Repeat("x ", 510) + "x..."},
	} {
		got := oneLine(tc.in, maxReason)
		if got != tc.want {
			t.Errorf("oneLine(%.40q) = %.80q, want %.80q", tc.in, got, tc.want)
		}
		if len(got) > maxReason || !utf8.ValidString(got) || strings.ContainsAny(got, "\n\r\t") {
			t.Errorf("oneLine(%.40q): %d bytes, valid %v", tc.in, len(got), utf8.ValidString(got))
		}
	}
}
