package kubectl

import (
	"slices"
	"strings"
	"testing"
)

// TestRefusals: what the editor cannot write in place is refused with
// one line that names the layout, the line it is on in the whole input,
// and what to do; nothing goes to stdout (run checks that).
func TestRefusals(t *testing.T) {
	pod := func(main string) string {
		return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  restartPolicy: Never\n  containers:\n" + main +
			"  - name: proxy\n    image: gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.18.2\n    command: [/cloud-sql-proxy]\n"
	}
	for _, tc := range []struct {
		name, input string
		want        []string // the layout, its line, what to do
	}{
		{"an anchor", "x: &cmd [sh, -c, echo hi]\n" + pod("  - name: main\n    image: busybox\n    command: *cmd\n"),
			[]string{"line 1:", "a YAML anchor", "write the value out"}},
		{"an anchor on a scalar", pod("  - name: main\n    image: &img busybox\n    command: [sh]\n"),
			[]string{"line 8:", "a YAML anchor", "write the value out"}},
		{"a block scalar on the last line, no final newline", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  restartPolicy: Never\n  containers:\n" +
			"  - name: proxy\n    image: gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.18.2\n    command: [/cloud-sql-proxy]\n" +
			"  - name: main\n    image: busybox\n    command:\n    - |\n      echo hi",
			[]string{"line 13:", "a block scalar (| or >) on the last line", "end the file with a newline"}},
		{"a merge key", strings.Replace(pod("  - name: main\n    image: busybox\n    command: [sh]\n"), "metadata: {name: p}\n", "metadata:\n  name: p\n  labels: &l {app: a}\n  annotations:\n    <<: *l\n", 1),
			[]string{"line 5:", "a YAML anchor", "write the value out"}},
		{"a tag", pod("  - name: main\n    image: busybox\n    command:\n    - !!str sh\n"),
			[]string{"line 10:", "a YAML tag", "without the tag"}},
		{"a plain scalar over lines", pod("  - name: main\n    image: busybox\n    command:\n    - echo\n      hi\n"),
			[]string{"line 10:", "a plain scalar over several lines", "quote it"}},
		{"a complex key", pod("  - name: main\n    image: busybox\n    ? command\n    : [sh, -c, echo hi]\n"),
			[]string{"line 9:", "a key written with '?'", "key: value"}},
		{"a key to remove on the line of its '-'", commandFirst(t, pod("  - name: main\n    image: busybox\n    command: [sh, -c, echo hi]\n")),
			[]string{"line 21:", "shares its line", "a line of its own"}},
		{"a second document's line", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\n" + pod("  - name: main\n    image: busybox\n    command:\n    - echo\n      hi\n"),
			[]string{"document 2 (line 5)", "line 14:", "quote it"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := run(t, tc.input, !strings.Contains(tc.input, "job-signal.dev/injected"))
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("not one line: %q", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q lacks %q", msg, w)
				}
			}
		})
	}
}

// commandFirst injects a Pod, then moves the command inject wrote for the
// container main to the line of its '-', where uninject cannot remove it.
func commandFirst(t *testing.T, input string) string {
	out, _, err := run(t, input, true)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out, "\n")
	i := slices.Index(lines, "  - name: main")
	j := i + slices.IndexFunc(lines[i:], func(l string) bool { return strings.HasPrefix(l, "    command: ") })
	lines[i], lines[j] = "  - "+strings.TrimSpace(lines[j]), "    name: main"
	return strings.Join(lines, "\n")
}
