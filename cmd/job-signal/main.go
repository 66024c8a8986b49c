// Command job-signal wraps a Kubernetes Job's main command so its sidecars
// start first and stop when it is done. See internal/jobsignal.
package main

import (
	"os"

	"github.com/job-signal/job-signal/internal/jobsignal"
)

func main() { os.Exit(jobsignal.MainOS()) }
