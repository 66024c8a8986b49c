package sidecarwatch

import (
	"errors"
	"strings"
	"testing"

	"github.com/job-signal/job-signal/signalfs"
)

// The table is docs/design.md's lifecycle rules, written before the code:
// restart policy × the job's state × whether this sidecar got the Pod's
// TERM.
func TestDecide(t *testing.T) {
	const (
		never     = signalfs.RestartNever
		onFailure = signalfs.RestartOnFailure
	)
	state := func(policy string, phase signalfs.JobPhase, code int, reason string) signalfs.JobView {
		return signalfs.JobView{Found: true, State: signalfs.JobState{Attempt: 2, Phase: phase, RestartPolicy: policy,
			Liveness: signalfs.LivenessFlock, ExitCode: code, Reason: reason}}
	}
	running := func(policy string, lock signalfs.LockState) signalfs.JobView {
		v := state(policy, signalfs.JobRunning, 0, "")
		v.Lock = lock
		return v
	}
	done := func(policy string, code int) signalfs.JobView {
		v := state(policy, signalfs.JobDone, code, signalfs.ReasonExited)
		v.Lock = signalfs.LockUnknown
		return v
	}
	noState := func(lock signalfs.LockState, policy string) signalfs.JobView {
		return signalfs.JobView{Lock: lock, LockPolicy: policy}
	}
	type want struct {
		stop, waitLock, jobKnown bool
		why, note                string
	}
	for _, tc := range []struct {
		name        string
		job         signalfs.JobView
		terminating bool
		want        want
	}{
		// No job-signal yet.
		{"nothing yet", noState(signalfs.LockAbsent, ""), false, want{}},
		{"nothing yet, Pod terminating", noState(signalfs.LockAbsent, ""), true, want{}},
		{"starting", noState(signalfs.LockHeld, never), false, want{waitLock: true, jobKnown: true}},
		// Died before writing its state: the policy job.lock recorded.
		{"died before state, Never", noState(signalfs.LockFree, never), false, want{stop: true, jobKnown: true, why: "died before writing its state"}},
		{"died before state, OnFailure", noState(signalfs.LockFree, onFailure), false, want{jobKnown: true, note: "died before writing its state: killed or OOM-killed; staying up"}},
		{"died before state, OnFailure, terminating", noState(signalfs.LockFree, onFailure), true, want{stop: true, jobKnown: true, why: "died before writing its state"}},
		{"died before state, nothing recorded", noState(signalfs.LockFree, ""), false, want{stop: true, jobKnown: true, why: "died before writing its state"}},
		// Running.
		{"running, Never", running(never, signalfs.LockHeld), false, want{waitLock: true, jobKnown: true}},
		{"running, OnFailure, terminating", running(onFailure, signalfs.LockHeld), true, want{waitLock: true, jobKnown: true}},
		{"running, liveness unknown", running(never, signalfs.LockUnknown), false, want{jobKnown: true}},
		// Lost: running, but the lock is free.
		{"lost, Never", running(never, signalfs.LockFree), false, want{stop: true, jobKnown: true, why: "job-signal (attempt 2) died without writing done"}},
		{"lost, OnFailure", running(onFailure, signalfs.LockFree), false, want{jobKnown: true, note: "(attempt 2) died without writing done: killed or OOM-killed; staying up"}},
		{"lost, OnFailure, terminating", running(onFailure, signalfs.LockFree), true, want{stop: true, jobKnown: true, why: "died without writing done"}},
		{"lost, lock removed", running(never, signalfs.LockAbsent), false, want{stop: true, jobKnown: true, why: "died without writing done"}},
		// Done.
		{"success, Never", done(never, 0), false, want{stop: true, jobKnown: true, why: "job done: attempt 2 exited with exit code 0"}},
		{"success, OnFailure", done(onFailure, 0), false, want{stop: true, jobKnown: true, why: "job done: attempt 2 exited with exit code 0"}},
		{"failure, Never", done(never, 3), false, want{stop: true, jobKnown: true, why: "exit code 3"}},
		{"failure, OnFailure", done(onFailure, 3), false, want{jobKnown: true, note: "job attempt 2 failed (exit code 3); staying up for the next attempt"}},
		{"failure, OnFailure, terminating", done(onFailure, 3), true, want{stop: true, jobKnown: true, why: "job done and Pod terminating"}},
		// job-signal alone got TERM (a probe failure), the
		// kubelet restarts it: not final under OnFailure.
		{"TERM to job-signal alone, OnFailure", func() signalfs.JobView {
			v := done(onFailure, 143)
			v.State.Terminating = true
			return v
		}(), false, want{jobKnown: true, note: "staying up for the next attempt"}},
		{"TERM to job-signal alone, Never", func() signalfs.JobView {
			v := done(never, 143)
			v.State.Terminating = true
			return v
		}(), false, want{stop: true, jobKnown: true, why: "exit code 143"}},
		// Unreadable state.
		{"garbage state, no lock", signalfs.JobView{Err: errors.New("malformed marker"), Lock: signalfs.LockAbsent}, false, want{note: "cannot read the job's state"}},
		{"garbage state, lock held", signalfs.JobView{Err: errors.New("malformed marker"), Lock: signalfs.LockHeld}, false, want{waitLock: true, jobKnown: true, note: "cannot read the job's state"}},
		{"garbage state, lock free", signalfs.JobView{Err: errors.New("malformed marker"), Lock: signalfs.LockFree, LockPolicy: never}, false, want{stop: true, jobKnown: true, why: "died before writing its state"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := decide(tc.job, tc.terminating)
			if got.stop != tc.want.stop || got.waitLock != tc.want.waitLock || got.jobKnown != tc.want.jobKnown {
				t.Errorf("stop/waitLock/jobKnown = %v/%v/%v, want %v/%v/%v", got.stop, got.waitLock, got.jobKnown, tc.want.stop, tc.want.waitLock, tc.want.jobKnown)
			}
			if !strings.Contains(got.why, tc.want.why) || (tc.want.why == "") != (got.why == "") {
				t.Errorf("why = %q, want %q", got.why, tc.want.why)
			}
			if !strings.Contains(got.note, tc.want.note) || (tc.want.note == "") != (got.note == "") {
				t.Errorf("note = %q, want %q", got.note, tc.want.note)
			}
		})
	}
}
