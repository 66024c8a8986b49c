package jobsignal

import (
	"io"
	"os/exec"
	"testing"
)

// BenchmarkRunTrue is job-signal's run path in this process, start to
// end, around `true`: what a start costs after the Go runtime and the
// packages are initialised. make bench profiles it for "Where the time
// goes".
func BenchmarkRunTrue(b *testing.B) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		b.Skip("no true in PATH")
	}
	args := []string{"--dir", b.TempDir(), "--log-level", "error", "--termination-log", "", "--", truePath}
	for b.Loop() {
		if code := Main(args, io.Discard, io.Discard); code != 0 {
			b.Fatalf("exit code %d", code)
		}
	}
}
