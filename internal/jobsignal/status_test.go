package jobsignal

import (
	"strings"
	"testing"
	"time"

	"github.com/job-signal/job-signal/signalfs"
)

func TestStatusVersions(t *testing.T) {
	for _, tc := range []struct {
		name        string
		job, sidecs []string
		warn        bool
	}{
		{"same", []string{"v0.1.0"}, []string{"v0.1.0", "v0.1.0"}, false},
		{"sidecar older", []string{"v0.2.0"}, []string{"v0.1.0"}, true},
		{"sidecars differ", []string{"v0.1.0"}, []string{"v0.1.0", "v0.1.1"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := signalfs.Open(t.TempDir(), false)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			d.WriteJob(signalfs.JobState{Attempt: 1, Phase: signalfs.JobRunning, RestartPolicy: signalfs.RestartNever, Version: tc.job[0], Updated: time.Now()})
			for i, v := range tc.sidecs {
				d.WriteSidecar(signalfs.SidecarState{Name: string(rune('a' + i)), Phase: signalfs.SidecarReady, Version: v, ExitCode: -1})
			}
			st := collectStatus(d)
			var text strings.Builder
			st.writeText(&text)
			if got := len(st.Warnings) > 0; got != tc.warn {
				t.Fatalf("warnings %v, want a warning: %v\n%s", st.Warnings, tc.warn, text.String())
			}
			if !strings.Contains(text.String(), "versions: job-signal "+tc.job[0]) {
				t.Errorf("text does not say the versions:\n%s", text.String())
			}
		})
	}
}
