package sidecarwatch

import (
	"testing"

	"github.com/job-signal/job-signal/internal/cli"
)

func TestHelpTexts(t *testing.T) {
	for _, p := range cli.HelpProblems(&Cmd{}) {
		t.Error(p)
	}
}
