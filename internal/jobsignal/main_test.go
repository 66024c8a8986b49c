package jobsignal

import (
	"reflect"
	"strings"
	"testing"

	"github.com/job-signal/job-signal/internal/cli"
)

// The command lines a Pod runs job-signal with are parsed without kong's
// model, into what kong would make of them.
func TestCommonCommandLinesParsedQuickly(t *testing.T) {
	for _, tc := range []struct {
		args string
		env  map[string]string
	}{
		{args: "-- /app/migrate --all"},
		{args: "/app/migrate --all"},
		{args: "--wait-for proxy,db -- /app/run"},
		{args: "--dir /var/run/job-signal --wait-for proxy --ready-timeout 30s --restart-policy OnFailure -- /app/run"},
		{args: "--log-format json --log-level debug --signal-group --subreaper --termination-log= -- /app/run"},
		{args: "--poll --poll-interval 1s --progress-interval 1s -- /app/run"},
		{args: "-- /app/run", env: map[string]string{"JOB_SIGNAL_WAIT_FOR": "proxy", "JOB_SIGNAL_READY_TIMEOUT": "1m",
			"JOB_SIGNAL_RESTART_POLICY": "OnFailure", "JOB_SIGNAL_DIR": "/shared", "JOB_SIGNAL_POLL": "true",
			"JOB_SIGNAL_SIGNAL_GROUP": "1", "JOB_SIGNAL_LOG_FORMAT": "json"}},
	} {
		t.Run(tc.args, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			args := withRunCommand(strings.Fields(tc.args))
			var quick, reference CLI
			if !cli.ParseQuick("job-signal", &quick, "Run", args[1:]) {
				t.Fatal("ParseQuick declined")
			}
			if _, err := cli.ParseKong("job-signal", &reference, args); err != nil {
				t.Fatalf("kong: %v", err)
			}
			// What the run reads; kong also gives the other commands'
			// flags their defaults, which nothing reads then.
			quick.Install, quick.Status = reference.Install, reference.Status
			if !reflect.DeepEqual(quick, reference) {
				t.Errorf("ParseQuick made\n%+v\nkong made\n%+v", quick, reference)
			}
		})
	}
}
