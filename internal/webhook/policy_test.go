package webhook

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
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

// TestPolicyTable: each failure class is temporary or lasting, once, and
// that decides what happens to a Pod that needs job-signal: denied for
// now when temporary (admitted without job-signal under Ignore), admitted
// without job-signal, the reason recorded, when lasting. A Pod that
// cannot need job-signal is never denied.
func TestPolicyTable(t *testing.T) {
	want := map[string]bool{
		reasonRegistry: true, reasonAPI: true, reasonBusy: true, reasonSlowRequest: true, reasonInternal: true,
		reasonRefused: false, reasonNotNative: false, reasonLimitRange: false, reasonAnnotations: false, reasonImage: false,
		reasonUnreadable: false, reasonRequestTooBig: false,
	}
	seen := map[string]bool{}
	for _, c := range policyTable {
		if seen[c.Reason] {
			t.Errorf("%s: twice in the table", c.Reason)
		}
		seen[c.Reason] = true
		if temp, ok := want[c.Reason]; !ok || temp != c.Temporary {
			t.Errorf("%s: temporary %v, want %v (listed %v)", c.Reason, c.Temporary, temp, ok)
		}
		f := failureOf(fail(c.Reason, errors.New("x")))
		needs := &corev1.Pod{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: make([]corev1.Container, 2)}}
		for _, tc := range []struct {
			pod    *corev1.Pod
			policy string
			want   outcome
		}{
			{needs, PolicyFail, map[bool]outcome{true: denied, false: skipped}[c.Temporary]},
			{needs, PolicyIgnore, skipped},
			{&corev1.Pod{Spec: corev1.PodSpec{Containers: make([]corev1.Container, 1)}}, PolicyFail, skipped},
			{&corev1.Pod{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyAlways, Containers: make([]corev1.Container, 2)}}, PolicyFail, skipped},
		} {
			if got := verdict(needsJobSignal(tc.pod), f.temporary(), tc.policy); got != tc.want {
				t.Errorf("%s, %d containers, restartPolicy %q, policy %s: %s, want %s", c.Reason, len(tc.pod.Spec.Containers), tc.pod.Spec.RestartPolicy, tc.policy, got, tc.want)
			}
		}
	}
	for r := range want {
		if !seen[r] {
			t.Errorf("%s: not in the table", r)
		}
	}
}

// TestPolicyCoversEveryFailure: every class the code passes to fail is a
// row of the table, read from the package's source.
func TestPolicyCoversEveryFailure(t *testing.T) {
	classes := map[string]string{} // constant name -> value
	files, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	var calls []*ast.CallExpr
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				for i, id := range n.Names {
					if len(n.Values) == 0 {
						break
					}
					if lit, ok := n.Values[min(i, len(n.Values)-1)].(*ast.BasicLit); ok && strings.HasPrefix(id.Name, "reason") {
						classes[id.Name], _ = strconv.Unquote(lit.Value)
					}
				}
			case *ast.CallExpr:
				if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "fail" {
					calls = append(calls, n)
				}
			}
			return true
		})
	}
	if len(calls) < 10 {
		t.Fatalf("found %d calls of fail: the test no longer reads the source", len(calls))
	}
	for _, call := range calls {
		id, ok := call.Args[0].(*ast.Ident)
		if !ok || !slices.ContainsFunc(policyTable, func(c failureClass) bool { return c.Reason == classes[id.Name] }) {
			t.Errorf("%s: fail(%s, ...) is not a class of the policy table", fset.Position(call.Pos()), types.ExprString(call.Args[0]))
		}
	}
}

// TestPolicyREADME: the README's policy table is the table the code reads.
func TestPolicyREADME(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	in := false
	for line := range strings.Lines(string(readme)) {
		line = strings.TrimSuffix(line, "\n")
		switch {
		case strings.HasPrefix(line, policyHeader):
			in = true
		case in && !strings.HasPrefix(line, "|"):
			in = false
		case in && !strings.HasPrefix(line, "|---"):
			got = append(got, line)
		}
	}
	want := policyMarkdown()
	if !slices.Equal(got, want) {
		t.Errorf("README.md's policy table (the lines under %q) is not the code's; write:\n%s\n%s", policyHeader, policyHeader, strings.Join(append([]string{"|---|---|---|---|"}, want...), "\n"))
	}
}

const policyHeader = "| reason class | what happened | temporary or lasting | a Pod that needs job-signal is |"

func policyMarkdown() []string {
	var rows []string
	for _, c := range policyTable {
		kind, then := "lasting", "admitted without job-signal"
		if c.Temporary {
			kind, then = "temporary", "**denied for now**"
		}
		rows = append(rows, fmt.Sprintf("| `%s` | %s | %s | %s |", c.Reason, c.Cause, kind, then))
	}
	return rows
}
