package kubectl

import (
	"os"
	"runtime/debug"
)

// The plugin reads every document, decodes it twice (kubectl's reader and
// the editor's) and reads each edited one back twice more, so most of
// what it allocates is garbage within one document; with Go's default
// collector (GOGC=100) a fifth of its CPU goes to collecting. A short
// run on a small input is cheaper with the collector running 4x less
// often; on a large input the heap, a few dozen times the input, would
// grow 5x instead of 2x, so there the default stays.

// smallInput is the largest input collected less often: about 1,500
// Jobs, whose peak heap then stays under about 250 MB.
const smallInput = 1 << 20

// gcPercent is the collector's setting for an input of size bytes, given
// the GOGC the user set ("" for none): the user's choice, else 400 for a
// small input; 0 leaves the runtime's.
func gcPercent(size int, userGOGC string) int {
	if userGOGC != "" || size > smallInput {
		return 0
	}
	return 400
}

// tuneGC sets the collector for an input of size bytes.
func tuneGC(size int) {
	if p := gcPercent(size, os.Getenv("GOGC")); p > 0 {
		debug.SetGCPercent(p)
	}
}
