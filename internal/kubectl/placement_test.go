package kubectl

import (
	"strings"
	"testing"

	"github.com/job-signal/job-signal/inject"
)

func add(path string, value any) inject.Op { return inject.Op{Op: "add", Path: path, Value: value} }

// TestPlacement: a new member or item goes where a person would put it,
// indented, quoted and laid out as its neighbours are.
func TestPlacement(t *testing.T) {
	checkEdits(t, []editCase{
		{"command before args, above its comment", "name: x\nimage: y\n# the args\nargs: [a]\n", false,
			[]inject.Op{add("/command", []string{"c"})}, "name: x\nimage: y\ncommand: [c]\n# the args\nargs: [a]\n"},
		{"a new key last", "a: 1\nb: 2\n", false, []inject.Op{add("/c", "three")}, "a: 1\nb: 2\nc: three\n"},
		{"after a last line without a newline", "a: 1\nb: 2", false, []inject.Op{add("/c", 3)}, "a: 1\nb: 2\nc: 3"},
		{"after a stripped block scalar without a newline", "a: |-\n  x", false, []inject.Op{add("/b", 1)}, "a: |-\n  x\nb: 1"},
		{"CRLF", "a: 1\r\nb: 2\r\n", false, []inject.Op{add("/c", 3)}, "a: 1\r\nb: 2\r\nc: 3\r\n"},
		{"a block list indented under its key", "a:\n  - x\n", false, []inject.Op{add("/a/-", "z")}, "a:\n  - x\n  - z\n"},
		{"a mapping item in a block list", "a:\n- x: 1\n", false,
			[]inject.Op{add("/a/-", inject.Fields{{Key: "name", Value: "m"}, {Key: "emptyDir", Value: inject.Fields{}}})}, "a:\n- x: 1\n- {name: m, emptyDir: {}}\n"},
		{"a block list indented as the mapping's were, though replaced", "a:\n  - x\nb: 1\n", false,
			[]inject.Op{{Op: "replace", Path: "/a", Value: "z"}, add("/c", []string{strings.Repeat("w", 40), strings.Repeat("v", 40), strings.Repeat("u", 40)})},
			"a: z\nb: 1\nc:\n  - " + strings.Repeat("w", 40) + "\n  - " + strings.Repeat("v", 40) + "\n  - " + strings.Repeat("u", 40) + "\n"},
		{"in front of a flow list", "a: [x, y]\n", false, []inject.Op{add("/a/0", "w")}, "a: [w, x, y]\n"},
		{"words that YAML reads as others, quoted", "a: []\n", false, []inject.Op{add("/a/-", "on"), add("/a/-", "y"), add("/a/-", "1e3"), add("/a/-", "a: b")}, "a: ['on', 'y', '1e3', 'a: b']\n"},
		{"into an empty flow list", "a: [ ]\n", false, []inject.Op{add("/a/-", "x"), add("/a/-", "z")}, "a: [ x, z]\n"},
		{"into an empty list of pretty JSON", "{\n  \"a\": []\n}\n", true, []inject.Op{add("/a/-", "x"), add("/a/-", "y")},
			"{\n  \"a\": [\n    \"x\",\n    \"y\"\n  ]\n}\n"},
		{"into a pretty JSON list", "{\n  \"a\": [\n    1\n  ]\n}\n", true, []inject.Op{add("/a/-", 2)}, "{\n  \"a\": [\n    1,\n    2\n  ]\n}\n"},
		{"into one-line JSON", `{"a": {"b": 1}}`, true, []inject.Op{add("/a/c", "x")}, `{"a": {"b": 1, "c": "x"}}`},
		{"into JSON indented with tabs, with tabs", "{\n\t\"a\": {\n\t\t\"b\": 1\n\t}\n}\n", true, []inject.Op{add("/a/c", inject.Fields{{Key: "d", Value: []any{1}}})},
			"{\n\t\"a\": {\n\t\t\"b\": 1,\n\t\t\"c\": {\n\t\t\t\"d\": [\n\t\t\t\t1\n\t\t\t]\n\t\t}\n\t}\n}\n"},
		{"into a one-line object of pretty JSON, on its line", "{\n  \"a\": {\"b\": [1]},\n  \"d\": {}\n}\n", true,
			[]inject.Op{add("/a/c", []any{"x", inject.Fields{{Key: "y", Value: 1}}}), {Op: "replace", Path: "/a/b", Value: []any{2, 3}}, add("/d/e", []any{})},
			"{\n  \"a\": {\"b\": [2, 3], \"c\": [\"x\", {\"y\": 1}]},\n  \"d\": {\n    \"e\": []\n  }\n}\n"},
	})
}

// TestDeriveStyle: the style of new text is read from the document.
func TestDeriveStyle(t *testing.T) {
	for _, tc := range []struct {
		text string
		json bool
		want style
	}{
		{"a:\n  b: 1\nc:\n- x\n", false, style{step: 2, nl: "\n"}},
		{"a:\n    b: 1\nc:\n    - x\n", false, style{step: 4, seqIn: true, nl: "\n"}},
		{"a:\r\n   b: 1\r\n", false, style{step: 3, nl: "\r\n"}},
		{"{\n    \"a\": 1\n}\n", true, style{json: true, step: 4, nl: "\n"}},
		{`{"a": 1}`, true, style{json: true, step: 2, nl: "\n", single: true}},
	} {
		root, err := parseText(t, tc.text, tc.json)
		if err != nil {
			t.Fatal(err)
		}
		if got := newEditor(&document{index: 1, line: 1, raw: tc.text, json: tc.json}, root).st; got != tc.want {
			t.Errorf("%q: %+v, want %+v", tc.text, got, tc.want)
		}
	}
}

// TestShiftLines: a block scalar moved to another column keeps its own
// indentation relative to its '-'.
func TestShiftLines(t *testing.T) {
	for _, tc := range []struct {
		text  string
		shift int
		want  string
	}{
		{"|\n  a\n\n  b", 2, "|\n    a\n\n    b"},
		{"|\n    a\n    b", -2, "|\n  a\n  b"},
		{"|\n a", -4, "|\na"},
	} {
		if got := (style{}).shift(tc.text, tc.shift); got != tc.want {
			t.Errorf("shift(%q, %d) = %q, want %q", tc.text, tc.shift, got, tc.want)
		}
	}
}
