package helmtool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLdflags: helm is stamped with the version tools/helm pins and told
// the Kubernetes version of its client libraries, as helm's own build does.
func TestLdflags(t *testing.T) {
	dir := t.TempDir()
	gomod := "module x\n\nrequire (\n\thelm.sh/helm/v3 v3.22.0 // indirect\n\tk8s.io/client-go v0.37.0 // indirect\n)\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	flags, err := ldflags(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"internal/version.version=v3.22.0", "pkg/chartutil.k8sVersionMinor=37", "pkg/lint/rules.k8sVersionMinor=37"} {
		if !strings.Contains(flags, want) {
			t.Errorf("ldflags %q lack %s", flags, want)
		}
	}
	key1, err := moduleKey(dir, flags)
	if err != nil {
		t.Fatal(err)
	}
	key2, _ := moduleKey(dir, flags+" -X a.b=c")
	if key1 == key2 {
		t.Error("other linker flags, the same cache key")
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if key3, _ := moduleKey(dir, flags); key3 == key1 {
		t.Error("another go.sum, the same cache key")
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ldflags(dir); err == nil || !strings.Contains(err.Error(), "requires no helm.sh/helm/v3") {
		t.Errorf("a go.mod without helm: %v", err)
	}
}
