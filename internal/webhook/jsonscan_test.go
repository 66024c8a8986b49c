package webhook

import (
	"bufio"
	"io"
	"strings"
	"testing"
)

// TestSkip: skip reads exactly one value, whatever its strings hold and
// wherever the buffer's refills fall (a 16-byte buffer here), and fails
// on a container that does not end or a control character in a string.
func TestSkip(t *testing.T) {
	for _, tc := range []struct{ in, rest string }{
		{`{"a":"}]","b":[1,{"c":"\"]}"}]} ,x`, ` ,x`},
		{`[["\\"],"\\\"[",{}]]`, `]`},
		{`  "a string that is longer than sixteen bytes"x`, `x`},
		{`-12.5e3}`, `}`},
		{`{}`, ``},
		{`{"a":"` + strings.Repeat(`\"}`, 40) + `"}y`, `y`},
	} {
		s := &scan{r: bufio.NewReaderSize(strings.NewReader(tc.in), 16)}
		s.skip()
		rest, _ := io.ReadAll(s.r)
		if s.err != nil || string(rest) != tc.rest {
			t.Errorf("%s: left %q (%v), want %q", tc.in, rest, s.err, tc.rest)
		}
	}
	for _, in := range []string{`{"a":[1,2}`, `{"a":"b`, "[\"a\nb\"]", `}`, ``} {
		s := &scan{r: bufio.NewReaderSize(strings.NewReader(in), 16)}
		if s.skip(); s.err == nil {
			t.Errorf("%q: skipped without an error", in)
		}
	}
}
