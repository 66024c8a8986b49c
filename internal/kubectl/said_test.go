package kubectl

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/job-signal/job-signal/inject"
)

// TestNoObjectsOneNote: an input with no Job, CronJob or Pod passes
// through as it is, exit 0, with one note saying so, for inject and
// uninject alike.
func TestNoObjectsOneNote(t *testing.T) {
	for _, input := range []string{"", "\n", "hello world\n", "foo: bar\n", "[1, 2]\n", "[]", "# a comment\n", "---\n---\n",
		"{\"foo\": \"bar\"}\n", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"} {
		for _, command := range []string{"inject", "uninject"} {
			args := []string{command, "-f", "-"}
			if command == "inject" {
				args = []string{command, "--offline", "-f", "-"}
			}
			var out, stderr bytes.Buffer
			code := Main(context.Background(), args, strings.NewReader(input), &out, &stderr)
			lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
			switch {
			case code != 0:
				t.Errorf("%s %q: exit %d: %s", command, input, code, stderr.String())
			case out.String() != input:
				t.Errorf("%s %q: wrote %q", command, input, out.String())
			case len(lines) != 1 || !strings.HasPrefix(lines[0], "note: the input holds no Job, CronJob or Pod") || !strings.Contains(lines[0], "nothing to "+command):
				t.Errorf("%s %q: stderr %q, want one note", command, input, stderr.String())
			}
		}
	}
	// Something to say about the input already: that is the note.
	var out, stderr bytes.Buffer
	deployment := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n"
	if code := Main(context.Background(), []string{"inject", "--offline", "-f", "-"}, strings.NewReader(deployment), &out, &stderr); code != 0 ||
		strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), "Deployment d: left unchanged") {
		t.Errorf("a Deployment: exit %d, stderr %q", code, stderr.String())
	}
}

const twoJobs = `apiVersion: batch/v1
kind: Job
metadata: {name: a}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: job, image: registry.example/job:1, command: [/job]}
      - {name: proxy, image: registry.example/proxy:1, command: [/proxy]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: b}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: job, image: registry.example/job:1, command: [/job]}
      - {name: proxy, image: registry.example/proxy:1, command: [/proxy]}
`

// TestNotesOncePerFact: that the cluster is not known, so auto writes the
// pair, is one fact of the run: one line, however many templates change.
func TestNotesOncePerFact(t *testing.T) {
	out, stderr, err := runOffline(twoJobs)
	if err != nil || !strings.Contains(out, inject.AnnotationInjected) {
		t.Fatalf("%v\n%s", err, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	seen := map[string]bool{}
	for _, l := range lines {
		if seen[l] {
			t.Errorf("said twice: %q", l)
		}
		seen[l] = true
	}
	if n := strings.Count(stderr, "cluster is not known"); n != 1 {
		t.Errorf("the unknown cluster said %d times, want once:\n%s", n, stderr)
	}
	if len(lines) != 2 { // that one, and the LimitRanges not checked
		t.Errorf("%d lines on stderr, want 2:\n%s", len(lines), stderr)
	}
}

// TestRefusedRunSaysOnlyWhy: a run that fails writes nothing to stdout,
// and on stderr nothing but its error: no note about a document it would
// have left alone, nor the form a refused template would have had.
func TestRefusedRunSaysOnlyWhy(t *testing.T) {
	onePod := "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  restartPolicy: Never\n  containers:\n  - {name: job, image: registry.example/job:1, command: [/job]}\n"
	huge := strings.Replace(twoJobs, "  template:\n    spec:\n", "  template:\n    metadata:\n      annotations: {big: "+strings.Repeat("x", 256<<10-200)+"}\n    spec:\n", 1)
	native := inject.Target{Mode: inject.ModeAuto, Cluster: inject.Cluster{Known: true, NativeSidecars: true, Version: "v1.33.0"}}
	for _, tc := range []struct {
		name, input string
		target      inject.Target
		want        string
	}{
		{"refused for its image, beside a Pod left alone", onePod + "---\n" + strings.Replace(twoJobs, "command: [/proxy]", "args: [--port, '5432']", 1), inject.Target{Mode: inject.ModeAuto}, "ENTRYPOINT is needed"},
		{"refused for its annotations, after its form was chosen", onePod + "---\n" + huge, native, "over the API server's limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, stderr bytes.Buffer
			err := Run(context.Background(), strings.NewReader(tc.input), &out, &stderr, &Options{Offline: true, Unchecked: "--offline", Target: tc.target})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one with %q", err, tc.want)
			}
			if out.Len() > 0 || stderr.Len() > 0 {
				t.Errorf("stdout %d bytes, stderr %q; want nothing but the error", out.Len(), stderr.String())
			}
		})
	}
}

// runOffline is `kubectl job-signal inject --offline` with its defaults
// (mode auto, the cluster not known): stdout, stderr and the error.
func runOffline(input string) (string, string, error) {
	target, note, err := decideTarget(inject.ModeAuto, "", true, detected{})
	if err != nil {
		return "", "", err
	}
	var out, stderr bytes.Buffer
	err = Run(context.Background(), strings.NewReader(input), &out, &stderr,
		&Options{Offline: true, Unchecked: "--offline", Target: target, TargetNote: note})
	return out.String(), stderr.String(), err
}

// TestOfflineRefusals: offline, an image the known-sidecar table does not
// know (another image, another version) is refused as ever, naming the
// container and the image; when native sidecars would serve the Pod, the
// refusal says so, since they need no ENTRYPOINT.
func TestOfflineRefusals(t *testing.T) {
	job := func(sidecar string) string {
		return "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n" +
			"      - {name: job, image: registry.example/job:1, command: [/job]}\n" + sidecar
	}
	for _, tc := range []struct {
		name, input string
		native      bool // the refusal says native sidecars would serve
		injects     bool
	}{
		{"an unknown image, a probe the kubelet can run", job("      - {name: proxy, image: registry.example/proxy:1, args: [--port, '5432'], readinessProbe: {tcpSocket: {port: 5432}}}\n"), true, false},
		{"an unknown image, no probe", job("      - {name: proxy, image: registry.example/proxy:1, args: [--port, '5432']}\n"), true, false},
		{"a known image of a version not read", job("      - {name: proxy, image: 'gcr.io/cloud-sql-connectors/cloud-sql-proxy:latest', args: ['--port=5432', 'p:r:i']}\n"), true, false},
		{"a known image whose readiness is on loopback: native would not serve", job("      - {name: proxy, image: 'gcr.io/cloud-sql-connectors/cloud-sql-proxy:9.0.0', args: ['--health-check', 'p:r:i']}\n"), false, false},
		{"a known image of a version read", job("      - {name: proxy, image: 'gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14.1', args: ['--port=5432', 'p:r:i']}\n"), false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, err := runOffline(tc.input)
			if tc.injects {
				if err != nil || !strings.Contains(out, "args: [/cloud-sql-proxy, '--port=5432', 'p:r:i']") {
					t.Fatalf("%v\n%s\n%s", err, out, stderr)
				}
				return
			}
			if err == nil {
				t.Fatalf("injected:\n%s", out)
			}
			msg := err.Error()
			if !strings.Contains(msg, `container "proxy" has no command, so its image's ENTRYPOINT is needed, and --offline forbids looking up`) {
				t.Errorf("not the offline refusal: %v", err)
			}
			if got := strings.Contains(msg, "native sidecars would serve this Pod and need no ENTRYPOINT"); got != tc.native {
				t.Errorf("says native would serve: %v, want %v: %v", got, tc.native, err)
			}
		})
	}
}
