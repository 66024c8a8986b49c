package jsonscan

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// TestSkip: Skip reads exactly one value, whatever its strings hold and
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
		s := New(strings.NewReader(tc.in), 16)
		s.Skip()
		rest, _ := io.ReadAll(s.r)
		if s.err != nil || string(rest) != tc.rest {
			t.Errorf("%s: left %q (%v), want %q", tc.in, rest, s.err, tc.rest)
		}
	}
	for _, in := range []string{`{"a":[1,2}`, `{"a":"b`, "[\"a\nb\"]", `}`, ``} {
		s := New(strings.NewReader(in), 16)
		if s.Skip(); s.err == nil {
			t.Errorf("%q: skipped without an error", in)
		}
	}
}

// TestStr: Str gives what encoding/json decodes, for strings up to
// MaxShort bytes decoded, plain or escaped, whole in the buffer or across
// its refills; "" for a longer one and for null; an error for a control
// character or an end inside the string.
func TestStr(t *testing.T) {
	for _, size := range []int{16, 4 << 10} {
		for _, in := range []string{
			`"name"`, `""`, `"a\"b\\c\/d\n\u00e9\ud83d\ude00"`, `"é and more than sixteen bytes"`,
			`"` + strings.Repeat("x", MaxShort) + `"`,
			`"` + strings.Repeat("x", MaxShort+1) + `"`,
			`"` + strings.Repeat("é", MaxShort/2) + `"`,
			`"` + strings.Repeat("é", MaxShort/2+1) + `"`,
			`"` + strings.Repeat(`\t`, MaxShort+1) + `"`,
			`null`,
			// Lone and broken surrogates, each as encoding/json reads it:
			// U+FFFD, and what follows read on its own.
			`"\ud800\u0041"`, `"\ud800\ud800\udc00"`, `"\udc00x"`, `"\ud83d"`, `"\ud83d\n"`,
		} {
			s := New(strings.NewReader(in+`,`), size)
			got := s.Str()
			var want string
			if err := json.Unmarshal([]byte(in), &want); err != nil {
				t.Fatal(err)
			}
			if len(want) > MaxShort {
				want = ""
			}
			if s.err != nil || got != want || s.Peek() != ',' {
				t.Errorf("%d: %.40s: %q (%v), want %q", size, in, got, s.err, want)
			}
		}
		for _, in := range []string{"\"a\nb\"", `"ab`, `ab"`} {
			if s := New(strings.NewReader(in), size); s.Str() != "" || s.err == nil {
				t.Errorf("%d: %q: read without an error", size, in)
			}
		}
	}
}
