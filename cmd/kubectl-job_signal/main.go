// Command kubectl-job_signal is the kubectl plugin `kubectl job-signal`:
// inject and uninject job-signal in manifests. See internal/kubectl.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/job-signal/job-signal/internal/kubectl"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := kubectl.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
