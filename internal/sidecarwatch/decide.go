package sidecarwatch

import (
	"fmt"

	"github.com/job-signal/job-signal/signalfs"
)

// decision is what the job's state means for this sidecar now. It is the
// one place that decides when a sidecar stops; docs/design.md's rules are in
// decide's comments, and decide_test.go holds the table.
type decision struct {
	stop bool // stop the sidecar now
	// waitLock: keep running, but be woken when job.lock is released: a
	// live job-signal holds it, and may die without a word.
	waitLock bool
	// jobKnown: a job-signal has shown itself in the directory (the
	// job-start warning and --job-start-timeout no longer apply).
	jobKnown bool
	why      string // why stop, for the log and the termination message
	// note is worth one log line when the sidecar keeps running for a
	// reason a person should know (an attempt failed, a job-signal died).
	note string
}

// decide says whether the sidecar stops, from the job's view (its state and
// lock, as signalfs reads them) and whether the Pod is terminating (this
// sidecar-watch got TERM, INT or QUIT itself).
//
// The rules:
//   - The job is over for good when it succeeded, or failed under
//     restartPolicy Never (no new attempt comes), or failed while the Pod
//     is terminating. Under OnFailure a failure is not final: the kubelet
//     restarts the main container, which needs its sidecars.
//   - Only the sidecar's own signal means the Pod is terminating. A TERM
//     that reached job-signal alone (a failed liveness or startup probe:
//     the kubelet kills the main container, then restarts it) is not final
//     under OnFailure, whatever job.state's terminating says.
//   - A job-signal that died without writing done (its lock is free: SIGKILL,
//     an OOM kill) failed its attempt with an unknown code; so did one that
//     died before writing any state, whose restart policy job.lock records
//     (none recorded: final, since it could not record anything).
//   - Until a job-signal shows itself, the sidecar waits (bounded by
//     --job-start-timeout and the Job's activeDeadlineSeconds).
func decide(job signalfs.JobView, terminating bool) decision {
	if !job.Found {
		return decideWithoutState(job, terminating)
	}
	s := job.State
	if s.Phase != signalfs.JobDone {
		switch job.Lock {
		case signalfs.LockHeld:
			return decision{waitLock: true, jobKnown: true}
		case signalfs.LockUnknown:
			// liveness=none, or the lock cannot be checked: a death
			// cannot be seen; activeDeadlineSeconds is the bound.
			d := decision{jobKnown: true}
			if job.LockErr != nil {
				d.note = "cannot check the job's lock: " + job.LockErr.Error()
			}
			return d
		}
		// Free (or removed): job-signal died without writing done.
		why := fmt.Sprintf("job-signal (attempt %d) died without writing done: killed or OOM-killed", s.Attempt)
		return failedAttempt(s.RestartPolicy, terminating, why)
	}
	result := fmt.Sprintf("attempt %d %s with exit code %d", s.Attempt, s.Reason, s.ExitCode)
	switch {
	case s.ExitCode == 0, s.RestartPolicy != signalfs.RestartOnFailure:
		// Success is final; under Never, so is every end.
		return decision{stop: true, jobKnown: true, why: "job done: " + result}
	case terminating:
		return decision{stop: true, jobKnown: true, why: "job done and Pod terminating: " + result}
	}
	return decision{jobKnown: true, note: fmt.Sprintf("job attempt %d failed (exit code %d); staying up for the next attempt (restartPolicy OnFailure)", s.Attempt, s.ExitCode)}
}

// decideWithoutState covers a directory without a readable job.state.
func decideWithoutState(job signalfs.JobView, terminating bool) decision {
	var note string
	if job.Err != nil {
		note = "cannot read the job's state; waiting for a valid one: " + job.Err.Error()
	}
	switch job.Lock {
	case signalfs.LockAbsent:
		return decision{note: note} // no job-signal has started here yet
	case signalfs.LockHeld:
		return decision{waitLock: true, jobKnown: true, note: note} // starting
	case signalfs.LockUnknown:
		if job.LockErr != nil {
			note = "cannot check the job's lock: " + job.LockErr.Error()
		}
		return decision{jobKnown: true, note: note}
	}
	// job.lock exists and is free: its job-signal died before writing
	// its state (an OOM kill in its first milliseconds, or no room).
	return failedAttempt(job.LockPolicy, terminating, "job-signal died before writing its state: killed or OOM-killed")
}

// failedAttempt decides for an attempt that ended without a done marker.
func failedAttempt(policy string, terminating bool, why string) decision {
	if policy == signalfs.RestartOnFailure && !terminating {
		return decision{jobKnown: true, note: why + "; staying up for the next attempt (restartPolicy OnFailure)"}
	}
	return decision{stop: true, jobKnown: true, why: why}
}
