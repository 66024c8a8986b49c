package kubectl

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestGCLimit(t *testing.T) {
	for _, tc := range []struct {
		size        int
		gogc, limit string
		want        int64
	}{
		{0, "", "", smallLimit},
		{smallInput, "", "", smallLimit},
		{smallInput + 1, "", "", 0},
		{100, "100", "", 0},
		{100, "off", "", 0},
		{100, "", "1GiB", 0},
		{smallInput + 1, "800", "", 0},
	} {
		if got := gcLimit(tc.size, tc.gogc, tc.limit); got != tc.want {
			t.Errorf("gcLimit(%d, %q, %q) = %d, want %d", tc.size, tc.gogc, tc.limit, got, tc.want)
		}
	}
}

func TestTooLive(t *testing.T) {
	for _, tc := range []struct {
		live, limit int64
		want        bool
	}{
		{0, smallLimit, false},
		{smallLimit / 2, smallLimit, false},
		{smallLimit/2 + 1, smallLimit, true},
		{2 * smallLimit, smallLimit, true},
	} {
		if got := tooLive(tc.live, tc.limit); got != tc.want {
			t.Errorf("tooLive(%d, %d) = %v", tc.live, tc.limit, got)
		}
	}
}

// TestCollectAtHandsBack: with a live heap over half the limit, the
// collector goes back to GOGC=400 after a cycle, rather than running
// back to back at the limit.
func TestCollectAtHandsBack(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	live := make([][]byte, 0, 64)
	for range 48 {
		live = append(live, make([]byte, 1<<20)) // 48 MiB live
	}
	collectAt(64 << 20)
	gogc := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	for deadline := time.Now().Add(20 * time.Second); ; {
		runtime.GC() // a cycle, after which the cleanup looks at the live heap
		metrics.Read(gogc)
		if gogc[0].Value.Uint64() == 400 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GOGC is %d after 20 s, want 400", gogc[0].Value.Uint64())
		}
		runtime.Gosched() // the cleanup runs on a goroutine of its own
	}
	runtime.KeepAlive(live)
}
