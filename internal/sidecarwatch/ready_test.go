package sidecarwatch

import (
	"bytes"
	"io"
	"sync"
	"testing"

	"github.com/job-signal/job-signal/signalfs"
)

// stateAtLog is sidecar-watch's stderr: when the "sidecar ready" line is
// written, it reads what the directory says of the sidecar at that moment.
type stateAtLog struct {
	dir  string
	mu   sync.Mutex
	all  bytes.Buffer
	seen bool
	at   signalfs.SidecarPhase
}

func (w *stateAtLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.all.Write(p)
	if !w.seen && bytes.Contains(p, []byte(`msg="sidecar ready"`)) {
		w.seen = true
		if d, err := signalfs.Open(w.dir, false); err == nil {
			s, _, _ := d.ReadSidecar("proxy")
			w.at = s.Phase
			d.Close()
		}
	}
	return len(p), nil
}

// TestReadyLoggedBeforeAnnounced: the "sidecar ready" line comes before
// the state that lets the job (or an --after dependant) start, so the logs
// never show a main command started before its sidecar was ready. The
// e2e suite's ordered-sidecars check once failed on that inversion.
func TestReadyLoggedBeforeAnnounced(t *testing.T) {
	w := &stateAtLog{dir: t.TempDir()}
	// No job-signal ever comes: sidecar-watch gives up after 1 s and stops
	// the sidecar (exit 125).
	code := Main([]string{"--dir", w.dir, "--name", "proxy", "--job-start-timeout", "1s", "--termination-log", "",
		"--", "sleep", "60"}, io.Discard, w)
	w.mu.Lock()
	defer w.mu.Unlock()
	if code != 125 {
		t.Fatalf("exit %d, want 125 (--job-start-timeout); stderr:\n%s", code, &w.all)
	}
	if !w.seen {
		t.Fatalf(`no "sidecar ready" line; stderr:\n%s`, &w.all)
	}
	if w.at == signalfs.SidecarReady {
		t.Errorf("the directory already said ready when sidecar-watch logged it; stderr:\n%s", &w.all)
	}
}
