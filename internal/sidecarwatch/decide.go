package sidecarwatch

import (
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/job-signal/job-signal/internal/proc"
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

// signalAction is what a signal sent to sidecar-watch asks for.
type signalAction int

const (
	sigForward     signalAction = iota // not a stop: pass it on to the sidecar
	sigTerminating                     // the Pod is terminating: serve until the job is done, at most --grace
	sigStopNow                         // a second INT while terminating: stop now, as people at a terminal expect
	sigAgain                           // termination again: already known, nothing more to do
)

// isTermination reports whether sig, sent to sidecar-watch, means the Pod
// is terminating: TERM (the kubelet's default), INT, QUIT, or the
// sidecar's own --stop-signal. The container runtime sends the image's
// STOPSIGNAL, not always TERM (haproxy's image says USR1, nginx's QUIT);
// inject writes that signal as --stop-signal, so the two agree, and a
// signal that would stop the sidecar if forwarded cannot mean anything
// else.
func isTermination(sig, stopSignal syscall.Signal) bool {
	return sig == syscall.SIGTERM || sig == syscall.SIGINT || sig == syscall.SIGQUIT || sig == stopSignal
}

// decideSignal says what a signal means, given the sidecar's --stop-signal
// and whether the Pod is known to be terminating already.
func decideSignal(sig, stopSignal syscall.Signal, terminating bool) signalAction {
	switch {
	case !isTermination(sig, stopSignal):
		return sigForward
	case !terminating:
		return sigTerminating
	case sig == syscall.SIGINT:
		return sigStopNow
	}
	return sigAgain
}

// exitAction is what follows the sidecar's command ending by itself
// before the job is done.
type exitAction int

const (
	exitRestart exitAction = iota // restart after the back-off
	exitStopped                   // end sidecar-watch with 0
	exitFail                      // end sidecar-watch with the sidecar's code
	exitAdopt                     // it daemonized: keep its daemon as the sidecar
)

// exitDecision is decideExit's answer: what to do, why, and a warning
// worth logging.
type exitDecision struct {
	action exitAction
	why    string
	code   int // exitFail's code
	note   string
}

// quickExit is how soon a command that exits 0 by itself looks like one
// that put itself in the background (daemonized) rather than one that did
// its work.
const quickExit = 2 * time.Second

// daemonHint is how to keep a sidecar from daemonizing.
const daemonHint = "run it in the foreground (nginx: 'daemon off;' in its config, or -g 'daemon off;'; others: a --foreground or --no-daemon flag)"

// decideExit decides for a sidecar whose command ended by itself while the
// job still needs it. adopted counts the live processes it left behind that
// sidecar-watch adopted (as PID 1 or --subreaper); reaping says whether it
// adopts at all.
func decideExit(status proc.Status, ranFor time.Duration, terminating bool, restart string, adopted int, reaping bool) exitDecision {
	switch {
	case terminating:
		return exitDecision{action: exitStopped, why: "the sidecar exited while the Pod is terminating: " + status.String()}
	case status.ExitCode() == 0 && adopted > 0:
		return exitDecision{action: exitAdopt, note: fmt.Sprintf("the sidecar daemonized: its command exited 0 after %s and left %d process(es) running, which sidecar-watch adopted; they are the sidecar now and are stopped when the job is done; to avoid this, %s",
			ranFor.Round(time.Millisecond), adopted, daemonHint)}
	}
	var note string
	if status.ExitCode() == 0 && ranFor < quickExit && !reaping {
		note = fmt.Sprintf("the sidecar's command exited 0 after %s: if it daemonized (forked into the background), its daemon is out of sidecar-watch's reach and will not be stopped; %s, or give --subreaper so sidecar-watch adopts and stops it",
			ranFor.Round(time.Millisecond), daemonHint)
	}
	if restart != "Never" {
		return exitDecision{action: exitRestart, note: note}
	}
	note = strings.TrimSuffix("sidecar ended by itself before the job was done; not restarting (--restart Never); "+note, "; ")
	if status.ExitCode() == 0 {
		return exitDecision{action: exitStopped, why: "the sidecar exited with code 0 by itself (--restart Never)", note: note}
	}
	return exitDecision{action: exitFail, code: status.ExitCode(), why: fmt.Sprintf("sidecar %s by itself before the job was done (--restart Never)", status), note: note}
}

// decideBackoff is the delay before a restart of a command that ran for
// ranFor, and the delay after it: the delay doubles after each quick
// failure, up to longest, and starts over at first after a run at least
// as long as longest.
func decideBackoff(delay, ranFor, first, longest time.Duration) (now, next time.Duration) {
	if ranFor >= longest {
		delay = first
	}
	return delay, min(2*delay, longest)
}
