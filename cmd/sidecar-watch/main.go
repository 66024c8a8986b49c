// Command sidecar-watch wraps a sidecar of a Kubernetes Job so it stops when
// the Job's main command is done. See internal/sidecarwatch.
package main

import (
	"os"

	"github.com/job-signal/job-signal/internal/sidecarwatch"
)

func main() { os.Exit(sidecarwatch.MainOS()) }
