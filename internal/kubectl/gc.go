package kubectl

import (
	"os"
	"runtime/debug"
)

// The plugin reads every document, decodes it twice (kubectl's reader and
// the editor's) and reads each edited one back twice more, so most of
// what it allocates is garbage within one document, and what stays live
// is small: a few dozen times the input. Go's default collector (GOGC=100)
// starts a cycle each time the heap doubles, which on a small live heap
// is often: a fifth of the plugin's CPU went to collecting. On a small
// input the collector instead runs only when the heap nears a fixed
// limit: 6 cycles for 1,000 Jobs, against 10 with GOGC=400 (a peak of
// 130 MB) and 36 with the default (65 MB), at a peak of about 110 MB.
// On a large input, whose live heap could come near that limit, the
// default stays.

// smallInput is the largest input collected by the limit: about 1,500
// Jobs, whose live heap stays well under it.
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

// tuneGC sets the collector for an input of size bytes.
func tuneGC(size int) {
	if limit := gcLimit(size, os.Getenv("GOGC"), os.Getenv("GOMEMLIMIT")); limit > 0 {
		debug.SetGCPercent(-1)
		debug.SetMemoryLimit(limit)
	}
}
