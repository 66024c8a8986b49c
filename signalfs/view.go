package signalfs

import (
	"fmt"
	"strings"
)

// JobView is everything the directory says about the job: its state and
// whether the job-signal that wrote it still runs. It is the one reader of
// those facts; what they mean for a sidecar is decided elsewhere.
type JobView struct {
	State JobState
	Found bool  // job.state exists and parses
	Err   error // job.state exists but cannot be read or parsed
	// Lock is job.lock's state. It is checked only when it matters: not
	// when the job is done, and not when job.state says liveness=none
	// (LockUnknown then).
	Lock LockState
	// LockErr is why Lock is LockUnknown, if an error.
	LockErr error
	// LockPolicy is the restart policy recorded in job.lock, read when
	// there is no job.state: "" when job.lock does not say.
	LockPolicy string
}

// Job reads the job's state and, when it matters, its lock. job-signal
// writes the done marker before it lets go of the lock, so a lock found
// free is followed by a second read of the state: a done marker written
// in between is never taken for a death.
func (d *Dir) Job() JobView {
	var v JobView
	v.State, v.Found, v.Err = d.ReadJob()
	if v.Found && (v.State.Phase == JobDone || v.State.Liveness == LivenessNone) {
		v.Lock = LockUnknown
		return v
	}
	v.Lock, v.LockErr = d.lockState(JobLockFile)
	if v.Lock == LockFree {
		v.State, v.Found, v.Err = d.ReadJob()
	}
	if !v.Found && v.Lock != LockAbsent {
		v.LockPolicy = d.jobLockPolicy()
	}
	return v
}

// SidecarCondition is what a sidecar's state and lock together say about
// it: what the ready gate, --after, --stop-after and status all go by.
type SidecarCondition int

const (
	SidecarMissing    SidecarCondition = iota // no state file: never started here
	SidecarUnreadable                         // a state file that cannot be read or parsed
	SidecarPending                            // alive and not ready yet: waiting, starting, restarting
	SidecarIsReady                            // alive and ready
	SidecarIsStopping                         // alive and stopping
	SidecarDead                               // its sidecar-watch died without saying so (lock free)
	SidecarIsStopped                          // stopped on purpose
	SidecarIsFailed                           // gave up for good
)

// SidecarView is one sidecar as the directory shows it.
type SidecarView struct {
	Name      string
	State     SidecarState // valid when Condition is not Missing or Unreadable
	Err       error        // why it is Unreadable
	Alive     bool         // its sidecar-watch holds its lock (true where that cannot be known)
	Condition SidecarCondition
}

// Ready reports whether the sidecar is ready now.
func (v SidecarView) Ready() bool { return v.Condition == SidecarIsReady }

// NeverReady reports whether the sidecar will not become ready again: it
// stopped or failed for good. (A dead one may: its container may restart.)
func (v SidecarView) NeverReady() bool {
	return v.Condition == SidecarIsStopped || v.Condition == SidecarIsFailed
}

// Gone reports whether the sidecar's command is not running and nobody
// will stop it: stopped, failed, dead, or never started. --stop-after does
// not wait for it.
func (v SidecarView) Gone() bool {
	switch v.Condition {
	case SidecarMissing, SidecarDead, SidecarIsStopped, SidecarIsFailed:
		return true
	}
	return false
}

// Why says in a few words what the sidecar is doing, with its last error:
// one wording per condition, for the gate's errors, the ordering waits'
// logs and status.
func (v SidecarView) Why(dir string) string {
	withError := func(s string) string {
		if v.State.LastError != "" {
			return s + ": " + v.State.LastError
		}
		return s
	}
	switch v.Condition {
	case SidecarMissing:
		return fmt.Sprintf("no state yet: is a sidecar-watch running with --name %s and --dir %s?", v.Name, dir)
	case SidecarUnreadable:
		return v.Err.Error()
	case SidecarDead:
		return withError(string(v.State.Phase) + ", but sidecar-watch not running (container died?)")
	case SidecarIsStopped:
		if v.State.Terminating {
			return "stopped: the Pod is terminating"
		}
		return withError("stopped")
	case SidecarIsReady:
		return "ready"
	case SidecarPending:
		if v.State.Phase == SidecarWaiting {
			return "waiting for its --after sidecars " + strings.Join(v.State.After, ",")
		}
	}
	return withError(string(v.State.Phase))
}

// Sidecar reads the named sidecar's state and, unless it stopped or failed
// for good, its lock.
func (d *Dir) Sidecar(name string) SidecarView {
	v := SidecarView{Name: name, Alive: true}
	s, found, err := d.ReadSidecar(name)
	switch {
	case err != nil:
		v.Condition, v.Err = SidecarUnreadable, err
		return v
	case !found:
		v.Condition = SidecarMissing
		return v
	}
	v.State = s
	switch s.Phase {
	case SidecarStopped:
		v.Condition = SidecarIsStopped
		return v
	case SidecarFailed:
		v.Condition = SidecarIsFailed
		return v
	}
	if s.Liveness == LivenessFlock {
		// A lock that cannot be checked proves nothing: count it alive.
		lock, _ := d.lockState(SidecarLockFile(name))
		v.Alive = lock == LockHeld || lock == LockUnknown
	}
	switch {
	case !v.Alive:
		v.Condition = SidecarDead
	case s.Phase == SidecarReady:
		v.Condition = SidecarIsReady
	case s.Phase == SidecarStopping:
		v.Condition = SidecarIsStopping
	default:
		v.Condition = SidecarPending
	}
	return v
}
