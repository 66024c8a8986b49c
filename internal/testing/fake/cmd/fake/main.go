// Command fake is internal/testing/fake as a program of its own, for the soak and
// the benchmarks (testscript registers the same Main as its `fake`).
package main

import (
	"os"

	"github.com/job-signal/job-signal/internal/testing/fake"
)

func main() { os.Exit(fake.Main(os.Args[1:])) }
