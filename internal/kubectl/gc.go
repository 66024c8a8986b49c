package kubectl

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// The plugin reads every document, decodes it twice (kubectl's reader and
// the editor's) and reads each edited one back twice more, so most of
// what it allocates is garbage within one document. Go's default
// collector starts a cycle each time the heap doubles, which on a small
// live heap is often. On a small input the collector instead runs only
// when the heap nears a fixed limit; a document of many small nodes can
// hold a live heap near that limit, where the collector would run back to
// back, so once the live heap passes half the limit the proportional rule
// (GOGC=400) takes over. On a large input the default stays. What each
// choice measured is in this file's commit messages and in BENCHMARKS.md.

// smallInput is the largest input collected at the limit.
const smallInput = 1 << 20

// smallLimit is the heap at which a small input's run collects.
const smallLimit = 100 << 20

// gcLimit is the memory limit for an input of size bytes, given the GOGC
// and GOMEMLIMIT the user set ("" for none): 0 leaves the runtime's
// settings (the user's, or the default).
func gcLimit(size int, userGOGC, userLimit string) int64 {
	if userGOGC != "" || userLimit != "" || size > smallInput {
		return 0
	}
	return smallLimit
}

// tooLive says whether a live heap of live bytes leaves a memory limit
// too little room: collection at the limit would run ever more often.
func tooLive(live, limit int64) bool { return live > limit/2 }

// tuneGC sets the collector for an input of size bytes.
func tuneGC(size int) {
	if limit := gcLimit(size, os.Getenv("GOGC"), os.Getenv("GOMEMLIMIT")); limit > 0 {
		collectAt(limit)
	}
}

// watching says that a cleanup is armed to look at the live heap after
// the next cycle.
var watching atomic.Bool

// collectAt has the collector run at limit, and, after each cycle, hands
// it back to GOGC=400 once the live heap is tooLive for the limit then.
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
