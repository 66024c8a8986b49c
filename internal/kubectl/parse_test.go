package kubectl

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// parseText reads text (YAML, or JSON when json) into the editor's tree.
func parseText(t *testing.T, text string, json bool) (*node, error) {
	t.Helper()
	if json {
		n, _, err := readJSON(text)
		return n, err
	}
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(text), &root); err != nil {
		t.Fatal(err)
	}
	return readYAML(text, root.Content[0])
}

// at follows path (keys and list indexes) from n.
func at(t *testing.T, n *node, path string) *node {
	t.Helper()
	for _, p := range strings.Split(path, "/") {
		i := n.index(p)
		if i < 0 {
			t.Fatalf("no %q", path)
		}
		n = n.items[i].val
	}
	return n
}

// TestParseSpans: each node's span is its text in the source, however it
// is written, and a string's value is decoded.
func TestParseSpans(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		json       bool
		path, want string
		str        string // the decoded string, when it is one
	}{
		{"plain", "a: b  # c\n", false, "a", "b", "b"},
		{"double quoted", "a: \"x\\\"y\"  # c\n", false, "a", `"x\"y"`, `x"y`},
		{"single quoted", "a: 'it''s'\n", false, "a", "'it''s'", "it's"},
		{"literal, clipped", "a: |\n  x\n\n\nb: 1\n", false, "a", "|\n  x", "x\n"},
		{"literal, kept", "a: |+\n  x\n\n\nb: 1\n", false, "a", "|+\n  x\n\n", "x\n\n\n"},
		{"folded, kept, CRLF", "a: >+\r\n  x\r\n\r\nb: 1\r\n", false, "a", ">+\r\n  x\r\n", "x\n\n"},
		{"literal, last line without a break", "b: 1\na: |\n  x", false, "a", "|\n  x", "x"},
		{"flow list with a comment", "a: [x, # c\n  y]\nb: 1\n", false, "a", "[x, # c\n  y]", ""},
		{"brackets in quotes", "a: ['],', \"]\"]\n", false, "a", "['],', \"]\"]", ""},
		{"empty value", "a:\nb: 1\n", false, "a", "", ""},
		{"block list item", "a:\n- x\n- y\n", false, "a/1", "y", "y"},
		{"after U+2028 in a string", "a: \"x\u2028y\"\nb: c\n", false, "b", "c", "c"},
		{"JSON list", `{"a": [1, "x\u0041"], "b": {}}`, true, "a", `[1, "x\u0041"]`, ""},
		{"JSON escapes", `{"a": [1, "x\u0041"], "b": {}}`, true, "a/1", `"x\u0041"`, "xA"},
		{"JSON escaped key, huge number", `{"\u0061": 1e400}`, true, "a", "1e400", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, err := parseText(t, tc.text, tc.json)
			if err != nil {
				t.Fatal(err)
			}
			n := at(t, root, tc.path)
			if got := tc.text[n.at:n.end]; got != tc.want {
				t.Errorf("span %q, want %q", got, tc.want)
			}
			if tc.str != "" && n.str != tc.str {
				t.Errorf("value %q, want %q", n.str, tc.str)
			}
		})
	}
}

// TestParseJSONErrors: malformed JSON is refused naming its line.
func TestParseJSONErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"{\n  \"a\": [1,\n  2,]\n}", "line 3: malformed JSON"},
		{"{\"a\": 1} {\"b\": 2}", "more than one value"},
		{strings.Repeat("[", maxDepth+2) + strings.Repeat("]", maxDepth+2), "nested more than"},
	} {
		if _, _, err := readJSON(tc.text); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.40q: error %v, want %q", tc.text, err, tc.want)
		}
	}
}
