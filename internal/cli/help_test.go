package cli_test

import (
	"testing"

	"github.com/job-signal/job-signal/internal/cli"
	"github.com/job-signal/job-signal/internal/jobsignal"
	"github.com/job-signal/job-signal/internal/sidecarwatch"
)

func TestHelpTexts(t *testing.T) {
	for name, grammar := range map[string]any{"job-signal": &jobsignal.CLI{}, "sidecar-watch": &sidecarwatch.Cmd{}} {
		for _, p := range cli.HelpProblems(grammar) {
			t.Errorf("%s: %s", name, p)
		}
	}
}
