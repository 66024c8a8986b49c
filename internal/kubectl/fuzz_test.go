package kubectl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzRoundTrip: byte mutations of real manifests keep the plugin's
// promise (checkInject): a refusal, or a file kubectl reads as inject
// means, stable, that uninject gives back byte for byte; nothing panics.
func FuzzRoundTrip(f *testing.F) {
	addShapes(f)
	f.Fuzz(func(t *testing.T, input string) {
		if strings.Contains(input, "job-signal") {
			return // injected already: inject repairs it, uninject gives the source before
		}
		checkInject(t, input)
	})
}

// addShapes seeds f with the realistic manifests of testdata/shapes.
func addShapes(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/shapes/*")
	for _, path := range seeds {
		if strings.Contains(path, ".injected.") || strings.Contains(path, ".native.") {
			continue
		}
		if b, err := os.ReadFile(path); err == nil {
			f.Add(string(b))
		}
	}
	f.Add(stream)
}
