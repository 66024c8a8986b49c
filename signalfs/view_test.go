package signalfs

import (
	"strings"
	"testing"
	"time"
)

// The classifier over real files and real locks: every condition, and what
// each consumer makes of it.
func TestSidecarView(t *testing.T) {
	type want struct {
		cond                    SidecarCondition
		ready, neverReady, gone bool
		why                     string
	}
	for _, tc := range []struct {
		name   string
		state  *SidecarState // nil: no state file
		locked bool          // a live sidecar-watch holds its lock
		raw    string        // a state file's raw content, instead of state
		want   want
	}{
		{"never started", nil, false, "", want{SidecarMissing, false, false, true, "no state yet: is a sidecar-watch running with --name proxy"}},
		{"garbage", nil, false, "nonsense\n", want{SidecarUnreadable, false, false, false, "malformed marker"}},
		{"starting", &SidecarState{Phase: SidecarStarting, LastError: "connection refused"}, true, "", want{SidecarPending, false, false, false, "starting: connection refused"}},
		{"waiting for --after", &SidecarState{Phase: SidecarWaiting, After: []string{"db"}}, true, "", want{SidecarPending, false, false, false, "waiting for its --after sidecars db"}},
		{"restarting", &SidecarState{Phase: SidecarRestarting, LastError: "sidecar exited with code 1"}, true, "", want{SidecarPending, false, false, false, "restarting: sidecar exited with code 1"}},
		{"ready", &SidecarState{Phase: SidecarReady}, true, "", want{SidecarIsReady, true, false, false, "ready"}},
		{"stopping", &SidecarState{Phase: SidecarStopping}, true, "", want{SidecarIsStopping, false, false, false, "stopping"}},
		{"ready but dead", &SidecarState{Phase: SidecarReady}, false, "", want{SidecarDead, false, false, true, "ready, but sidecar-watch not running (container died?)"}},
		{"stopping but dead", &SidecarState{Phase: SidecarStopping}, false, "", want{SidecarDead, false, false, true, "sidecar-watch not running"}},
		{"stopped", &SidecarState{Phase: SidecarStopped}, false, "", want{SidecarIsStopped, false, true, true, "stopped"}},
		{"stopped at Pod termination", &SidecarState{Phase: SidecarStopped, Terminating: true}, false, "", want{SidecarIsStopped, false, true, true, "stopped: the Pod is terminating"}},
		{"failed", &SidecarState{Phase: SidecarFailed, LastError: "command not found"}, false, "", want{SidecarIsFailed, false, true, true, "failed: command not found"}},
		{"no flock here", &SidecarState{Phase: SidecarReady, Liveness: LivenessNone}, false, "", want{SidecarIsReady, true, false, false, "ready"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := openTemp(t)
			if tc.locked {
				l, err := d.LockSidecar("proxy")
				if err != nil {
					t.Fatal(err)
				}
				defer l.Release()
			}
			if tc.raw != "" {
				d.writeAtomic(SidecarStateFile("proxy"), []byte(tc.raw))
			}
			if tc.state != nil {
				s := *tc.state
				s.Name, s.ExitCode = "proxy", -1
				if s.Liveness == "" {
					s.Liveness = LivenessFlock
				}
				if err := d.WriteSidecar(s); err != nil {
					t.Fatal(err)
				}
			}
			v := d.Sidecar("proxy")
			if v.Condition != tc.want.cond {
				t.Fatalf("condition %d, want %d", v.Condition, tc.want.cond)
			}
			if v.Ready() != tc.want.ready || v.NeverReady() != tc.want.neverReady || v.Gone() != tc.want.gone {
				t.Errorf("ready/neverReady/gone = %v/%v/%v, want %v/%v/%v", v.Ready(), v.NeverReady(), v.Gone(), tc.want.ready, tc.want.neverReady, tc.want.gone)
			}
			if why := v.Why(d.Path()); !strings.Contains(why, tc.want.why) {
				t.Errorf("Why() = %q, want it to hold %q", why, tc.want.why)
			}
		})
	}
}

func TestJobView(t *testing.T) {
	d := openTemp(t)
	if v := d.Job(); v.Found || v.Lock != LockAbsent {
		t.Fatalf("empty directory: %+v", v)
	}
	lock, err := d.LockJob(RestartOnFailure)
	if err != nil {
		t.Fatal(err)
	}
	if v := d.Job(); v.Found || v.Lock != LockHeld || v.LockPolicy != RestartOnFailure {
		t.Fatalf("locked, no state: %+v", v)
	}
	running := JobState{Attempt: 1, Phase: JobRunning, RestartPolicy: RestartOnFailure, Liveness: LivenessFlock, Updated: time.Now()}
	d.WriteJob(running)
	if v := d.Job(); !v.Found || v.State.Phase != JobRunning || v.Lock != LockHeld {
		t.Fatalf("running: %+v", v)
	}
	lock.Release()
	if v := d.Job(); !v.Found || v.Lock != LockFree {
		t.Fatalf("running, lock released (died): %+v", v)
	}
	done := running
	done.Phase, done.ExitCode, done.Reason = JobDone, 0, ReasonExited
	d.WriteJob(done)
	if v := d.Job(); !v.Found || v.State.Phase != JobDone || v.Lock != LockUnknown {
		t.Fatalf("done: the lock is not even looked at: %+v", v)
	}
}
