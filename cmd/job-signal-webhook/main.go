// Command job-signal-webhook is the mutating admission webhook that adds
// job-signal to the Pods of Jobs. See internal/webhook.
package main

import (
	"os"

	"github.com/job-signal/job-signal/internal/webhook"
)

func main() { os.Exit(webhook.Main(os.Args[1:], os.Stdout, os.Stderr)) }
