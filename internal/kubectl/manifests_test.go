package kubectl

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/manifests")

// run runs the plugin's transformation (offline) and returns stdout and
// stderr; opts nil uninjects.
func run(t *testing.T, input string, inject bool) (string, string, error) {
	t.Helper()
	var out, stderr bytes.Buffer
	var opts *Options
	if inject {
		opts = &Options{Offline: true}
	}
	err := Run(context.Background(), strings.NewReader(input), &out, &stderr, opts)
	if err != nil && out.Len() > 0 {
		t.Errorf("an error, and yet %d bytes on stdout", out.Len())
	}
	return out.String(), stderr.String(), err
}

// TestManifests runs the examples of manifests/ through uninject, then
// inject, and compares both with golden files (-update rewrites them;
// review the diff). Whatever layout the examples use (the first one with a
// single volume, or docs/layout.md's), uninject must turn them into plain
// manifests with annotations, and inject must bring them back into
// docs/layout.md's layout, stably.
func TestManifests(t *testing.T) {
	sources, _ := filepath.Glob("../../manifests/*.yaml")
	sources = append(sources, "../../manifests/kustomize/example/job.yaml")
	for _, src := range sources {
		name := strings.TrimSuffix(filepath.Base(src), ".yaml")
		if strings.Contains(src, "kustomize") {
			name = "kustomize-example-" + name
		}
		t.Run(name, func(t *testing.T) {
			input, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			plain, stderr, err := run(t, string(input), false)
			if err != nil {
				t.Fatalf("uninject: %v\n%s", err, stderr)
			}
			if strings.Contains(plain, "/var/run/job-signal") {
				t.Errorf("uninjected %s still has job-signal paths:\n%s", src, plain)
			}
			injected, stderr, err := run(t, plain, true)
			if err != nil {
				injected = "error: " + err.Error() + "\n"
			} else {
				again, _, err := run(t, injected, true)
				if err != nil || again != injected {
					t.Errorf("inject twice differs (%v):\n%s", err, again)
				}
				back, _, err := run(t, injected, false)
				if err != nil || back != plain {
					t.Errorf("uninject(inject(x)) != x (%v):\n%s", err, back)
				}
			}
			golden(t, "testdata/manifests/"+name+".uninjected.yaml", plain)
			golden(t, "testdata/manifests/"+name+".injected.yaml", injected+stderr)
		})
	}
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: run go test ./internal/kubectl -run TestManifests -update", err)
	}
	if string(want) != got {
		t.Errorf("%s differs: if manifests/ changed on purpose, run go test ./internal/kubectl -run TestManifests -update and review the diff\n--- got\n%s", path, got)
	}
}
