// Command profiledwebhook is job-signal-webhook under Go's CPU profiler,
// for the e2e suite's TestWebhookScale (E2E_WEBHOOK_CPU_PROFILE): it
// writes the profile to the file JOB_SIGNAL_CPU_PROFILE names when the
// webhook exits (on SIGTERM). Test tooling: never shipped.
package main

import (
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/job-signal/job-signal/internal/webhook"
)

func main() {
	path := os.Getenv("JOB_SIGNAL_CPU_PROFILE")
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "profiledwebhook: JOB_SIGNAL_CPU_PROFILE:", err)
		os.Exit(2)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, "profiledwebhook:", err)
		os.Exit(2)
	}
	code := webhook.Main(os.Args[1:], os.Stdout, os.Stderr)
	pprof.StopCPUProfile()
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "profiledwebhook:", err)
		code = 2
	}
	os.Exit(code)
}
