package kubectl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRealManifestsOffline runs public manifests (testdata/real: the Cloud
// SQL Auth Proxy's examples, Istio's injector output; each names its
// source) through inject as `kubectl job-signal inject --offline` does,
// and compares what it writes, stdout then stderr, with golden files
// (NAME.injected.yaml; -update rewrites them). Their sidecars have args
// only: the known-sidecar table's entrypoints inject them with no registry.
// Every output injects again unchanged and uninjects byte for byte.
func TestRealManifestsOffline(t *testing.T) {
	inputs, _ := filepath.Glob("testdata/real/*.yaml")
	var n int
	for _, in := range inputs {
		if strings.HasSuffix(in, ".injected.yaml") {
			continue
		}
		n++
		name := strings.TrimSuffix(filepath.Base(in), ".yaml")
		t.Run(name, func(t *testing.T) {
			input, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			out, stderr, err := runOffline(string(input))
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			again, _, err := runOffline(out)
			if err != nil || again != out {
				t.Errorf("inject again changes the output (%v)", err)
			}
			back, _, err := run(t, out, false)
			if err != nil || back != string(input) {
				t.Errorf("uninject does not give the input back (%v)", err)
			}
			if strings.Count(stderr, "the cluster is not known") != 1 && out != string(input) {
				t.Errorf("the unknown cluster is said %d times, want once:\n%s", strings.Count(stderr, "the cluster is not known"), stderr)
			}
			golden(t, "testdata/real/"+name+".injected.yaml", out+stderr)
		})
	}
	if n < 4 {
		t.Fatalf("%d manifests in testdata/real", n)
	}
}
