package kubectl

import (
	"strings"
	"testing"

	"github.com/job-signal/job-signal/inject"
)

// editText applies ops to text (YAML, or JSON when json) as the plugin
// does, and returns the edited text.
func editText(t *testing.T, text string, json bool, ops ...inject.Op) (string, error) {
	t.Helper()
	root, err := parseText(t, text, json)
	if err != nil {
		t.Fatal(err)
	}
	ed := newEditor(&document{index: 1, line: 1, raw: text, json: json}, root)
	for _, op := range ops {
		if err := ed.apply(op); err != nil {
			return "", err
		}
	}
	return ed.finish(), nil
}

func remove(path string) inject.Op { return inject.Op{Op: "remove", Path: path} }

// TestDiff: what the ops remove or rename is written as the smallest
// edit of the source, and nothing else changes.
func TestDiff(t *testing.T) {
	checkEdits(t, []editCase{
		{"an item in the middle of a flow list", "a: [x, y, z]  # c\n", false, []inject.Op{remove("/a/1")}, "a: [x, z]  # c\n"},
		{"the last item of a flow list", "a: [x, y, z]\n", false, []inject.Op{remove("/a/2")}, "a: [x, y]\n"},
		{"every item of a flow list", "a: [ x, y ]\n", false, []inject.Op{remove("/a/1"), remove("/a/0")}, "a: [  ]\n"},
		{"the items of pretty JSON", "{\"a\": [\n  1,\n  2\n]}", true, []inject.Op{remove("/a/1"), remove("/a/0")}, "{\"a\": []}"},
		{"a block list item", "a:\n- x  # c\n- y\n", false, []inject.Op{remove("/a/0")}, "a:\n- y\n"},
		{"a member over several lines", "a:\n  b: |\n    x\n  c: 1\n", false, []inject.Op{remove("/a/b")}, "a:\n  c: 1\n"},
		{"the last line, no final newline", "a: 1\nb:\n- 2", false, []inject.Op{remove("/b")}, "a: 1"},
		{"the last lines, no final newline, CRLF", "a: 1\r\nb: 2\r\nc: 3", false, []inject.Op{remove("/b"), remove("/c")}, "a: 1"},
		{"a JSON member", `{"a": 1, "b": 2, "c": 3}`, true, []inject.Op{remove("/b")}, `{"a": 1, "c": 3}`},
		{"a rename keeps the quotes", "\"command\": [x]\n'n': 1\n", false,
			[]inject.Op{{Op: "move", From: "/command", Path: "/args"}, {Op: "move", From: "/n", Path: "/m"}}, "\"args\": [x]\n'm': 1\n"},
		{"a rename with the key's kept text", `{"args": [1]}`, true, []inject.Op{{Op: "move", From: "/args", Path: "/command", Text: `json:"comm\u0061nd"`}}, `{"comm\u0061nd": [1]}`},
		{"a replaced value", "a: 1  # c\nb: 2\n", false, []inject.Op{{Op: "replace", Path: "/a", Value: "two"}}, "a: two  # c\nb: 2\n"},
		{"a value replaced by kept text", "a: [x]\n", false, []inject.Op{{Op: "replace", Path: "/a", Value: []string{"y"}, Text: "yaml:\n- 'y'"}}, "a:\n- 'y'\n"},
	})
}

// editCase is text, the ops applied to it, and the text wanted.
type editCase struct {
	name, text string
	json       bool
	ops        []inject.Op
	want       string
}

func checkEdits(t *testing.T, cases []editCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := editText(t, tc.text, tc.json, tc.ops...)
			if err != nil || got != tc.want {
				t.Errorf("got %q (%v), want %q", got, err, tc.want)
			}
		})
	}
}

// TestDiffRefusals: an edit the editor cannot make in place is refused
// with its line, not written wrong.
func TestDiffRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		ops        []inject.Op
		want       string
	}{
		{"a key on the line of its '-'", "a: 1\nb:\n- c: 1\n  d: 2\n", []inject.Op{remove("/b/0/c")}, "line 3: cannot edit in place: a key to remove that shares its line"},
		{"no such member", "a: 1\n", []inject.Op{remove("/b")}, "no such member"},
		{"no such index", "a: [x]\n", []inject.Op{remove("/a/3")}, "no such index"},
		{"a move to another object", "a: {b: 1}\nc: {}\n", []inject.Op{{Op: "move", From: "/a/b", Path: "/c/b"}}, "only a rename"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := editText(t, tc.text, false, tc.ops...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}
