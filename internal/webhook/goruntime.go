package webhook

import (
	"runtime"
	"runtime/debug"
)

// softMemoryLimit is the Go runtime's soft memory limit unless GOMEMLIMIT
// sets one: near it the collector works harder, so that the bounds on
// requests in hand and on registry reads, which keep the live heap well
// below it, bound the process's size too, not only its live heap.
const softMemoryLimit = 40 << 20

// gcPercent is the collector's GOGC unless GOGC sets one. Each admission
// allocates much and keeps none of it, while the live heap (the API client, the
// LimitRange cache, the metrics) is small: at Go's default of 100 the
// collector runs every few dozen Pods, and BenchmarkServeMutate spends
// less CPU per Pod at 400 (the figures are in the commit that set it).
// softMemoryLimit, not this, bounds the process's size: without it
// (GOMEMLIMIT set) the collector keeps Go's default.
const gcPercent = 400

// procs is the runtime's GOMAXPROCS unless GOMAXPROCS sets one. An
// admission is a short burst of CPU between waits on the network, and
// the API server sends far fewer Pods a second than one CPU answers: a
// second P adds no throughput the API server asks for, but every request
// then pays for the scheduler waking and spinning threads to look for
// work there is not (the figures are in the commit that set it). The
// README's "Operating it" says how to give it more.
const procs = 1

// runtimeSettings is what tuneRuntime sets, from the environment the
// runtime reads (getenv): zero leaves a setting as the runtime has it.
type runtimeSettings struct {
	memoryLimit int64
	gcPercent   int
	procs       int
}

// runtimeFor decides the runtime's settings: the webhook's own, except
// where the environment sets the runtime's. GOGC is left as Go has it
// when GOMEMLIMIT is set: alone, a GOGC of 400 would let the heap grow
// fivefold.
func runtimeFor(getenv func(string) string) runtimeSettings {
	var s runtimeSettings
	if getenv("GOMEMLIMIT") == "" {
		s.memoryLimit = softMemoryLimit
		if getenv("GOGC") == "" {
			s.gcPercent = gcPercent
		}
	}
	if getenv("GOMAXPROCS") == "" {
		s.procs = procs
	}
	return s
}

// tuneRuntime applies s.
func tuneRuntime(s runtimeSettings) {
	if s.memoryLimit > 0 {
		debug.SetMemoryLimit(s.memoryLimit)
	}
	if s.gcPercent > 0 {
		debug.SetGCPercent(s.gcPercent)
	}
	if s.procs > 0 {
		runtime.GOMAXPROCS(s.procs)
	}
}
