package kubectl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzRoundTrip: for any input inject (offline) accepts, uninject gives
// the input back byte for byte, and injecting the output changes nothing;
// and nothing panics.
func FuzzRoundTrip(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/shapes/*")
	for _, path := range seeds {
		if strings.Contains(path, ".injected.") {
			continue
		}
		if b, err := os.ReadFile(path); err == nil {
			f.Add(string(b))
		}
	}
	f.Add(stream)
	f.Fuzz(func(t *testing.T, input string) {
		if strings.Contains(input, "job-signal") {
			return // injected already: inject repairs it, uninject gives the source before
		}
		out, _, err := run(t, input, true)
		if err != nil || out == input {
			return
		}
		back, _, err := run(t, out, false)
		if err != nil || back != input {
			t.Fatalf("uninject(inject(x)) != x (%v):\n--- x\n%q\n--- got\n%q\n--- inject(x)\n%s", err, input, back, out)
		}
		again, _, err := run(t, out, true)
		if err != nil || again != out {
			t.Fatalf("inject twice differs (%v):\n%s\n---\n%s", err, out, again)
		}
	})
}
