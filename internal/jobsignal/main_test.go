package jobsignal

import (
	"strings"
	"testing"
)

// Which command lines are run's, the default command, decided from the one
// reading of the command line before kong's; and the word refused when it
// looks like a mistyped command.
func TestRuns(t *testing.T) {
	for _, tc := range []struct {
		args    string
		runs    bool
		command string
	}{
		{"-- /app/migrate --all", true, ""},
		{"/app/migrate --all", true, "/app/migrate"},
		{"--wait-for proxy,db -- /app/run", true, ""},
		{"--dir /shared --wait-for proxy --ready-timeout 30s stauts", true, "stauts"},
		{"run --dir /shared -- status", true, ""},
		{"run stauts", true, "stauts"},
		{"-- status", true, ""},
		{"", true, ""},
		{"--dir /shared -h", true, ""}, // run's help
		{"-h", false, ""},              // the overview
		{"--help", false, ""},
		{"status --dir /shared", false, ""},
		{"--log-format json status", false, ""},
		{"install /var/run/bin", false, "/var/run/bin"},
		{"version", false, ""},
	} {
		sc := cliFlags.Scan(strings.Fields(tc.args))
		if got := runs(sc); got != tc.runs || sc.Command != tc.command {
			t.Errorf("%q: runs %v, COMMAND %q; want %v, %q", tc.args, got, sc.Command, tc.runs, tc.command)
		}
	}
}
