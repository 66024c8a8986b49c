package kubectl

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// Most of what the plugin allocates is garbage within one document: a
// small input is collected near a fixed heap limit, not each time the heap
// doubles, until its live heap passes half that limit (then GOGC=400).
// A large input, or a user's GOGC or GOMEMLIMIT, keeps the runtime's rule.

const (
	smallInput = 1 << 20   // the largest input collected at the limit
	smallLimit = 100 << 20 // that limit
)

// gcLimit is the memory limit for an input of size bytes given the
// user's GOGC and GOMEMLIMIT; 0 leaves the runtime's settings.
func gcLimit(size int, userGOGC, userLimit string) int64 {
	if userGOGC != "" || userLimit != "" || size > smallInput {
		return 0
	}
	return smallLimit
}

// tooLive says whether a live heap leaves the limit too little room.
func tooLive(live, limit int64) bool { return live > limit/2 }

func tuneGC(size int) {
	if limit := gcLimit(size, os.Getenv("GOGC"), os.Getenv("GOMEMLIMIT")); limit > 0 {
		collectAt(limit)
	}
}

// watching: a cleanup is armed to look at the live heap after a cycle.
var watching atomic.Bool

// collectAt collects at limit until, after some cycle, the live heap is
// tooLive for it: then at GOGC=400.
func collectAt(limit int64) {
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(limit)
	if watching.CompareAndSwap(false, true) {
		watchLive()
	}
}

type sentinel struct{ _ *byte } // not a tiny allocation, so its cleanup runs

func watchLive() {
	runtime.AddCleanup(new(sentinel), func(int) {
		live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(live)
		if !tooLive(int64(live[0].Value.Uint64()), debug.SetMemoryLimit(-1)) {
			watchLive()
			return
		}
		debug.SetGCPercent(400)
		debug.SetMemoryLimit(math.MaxInt64)
		watching.Store(false)
	}, 0)
}
