// Command job-signal-demo runs a Job with three sidecars on this machine,
// in a temporary directory, and prints what happens and when. See
// internal/demo.
package main

import (
	"os"

	"github.com/job-signal/job-signal/internal/demo"
)

func main() { os.Exit(demo.Main(os.Args[1:], os.Stdout, os.Stderr)) }
