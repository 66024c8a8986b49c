package jobsignal

import (
	"os"
	"time"

	"github.com/job-signal/job-signal/internal/cli"
	"github.com/job-signal/job-signal/signalfs"
)

// early is job.lock taken before the command line is parsed. A job-signal
// killed in its first milliseconds (an OOM kill of its container) leaves
// the sidecars one of two pictures: no entry at all, exactly as if it never
// ran (they wait; --job-start-timeout or the Job's activeDeadlineSeconds
// bound that), or job.lock, released by its death, which tells them. The
// lock is therefore taken first, and is the first entry made: the window
// between exec and the lock is Go's start-up and this file's work, and
// parsing comes after (README, "Start-up window").
//
// Only an existing directory is locked here: a mistyped command line must
// not make directories. A --dir that does not exist yet is made and locked
// after parsing.
type early struct {
	dir  *signalfs.Dir
	lock *signalfs.Lock
	err  error // the lock is held by another job-signal (reported after parsing)
}

// lockEarly reads --dir and --restart-policy as kong will (the last given,
// then the environment, then the default) and takes job.lock.
func lockEarly(sc cli.Scanned) *early {
	e := &early{}
	if sc.Help >= 0 {
		return e
	}
	dir, err := signalfs.Open(sc.Value("dir", "JOB_SIGNAL_DIR", signalfs.DefaultDir), false)
	if err != nil {
		return e // made (or refused) after parsing, with a proper error
	}
	lock, err := dir.LockJob(sc.Value("restart-policy", "JOB_SIGNAL_RESTART_POLICY", signalfs.RestartNever))
	if err != nil {
		dir.Close()
		e.err = err
		return e
	}
	e.dir, e.lock = dir, lock
	return e
}

// take hands the lock to a run on path, or nothing when it was not taken
// there.
func (e *early) take(path string) (*signalfs.Dir, *signalfs.Lock) {
	if e == nil || e.lock == nil || e.dir.Path() != path {
		return nil, nil
	}
	dir, lock := e.dir, e.lock
	e.dir, e.lock = nil, nil
	return dir, lock
}

func (e *early) release() {
	if e != nil && e.lock != nil {
		e.lock.Release()
		e.dir.Close()
	}
}

// recordUsageFailure writes a done marker for a job-signal whose command
// line is wrong: without one the sidecars would wait for ever for a job
// that will never run. The failure repeats on every restart, so the marker
// is final (restart policy Never) whatever the Pod's policy. Only where the
// early lock was taken: into an existing directory, never over a live job.
func (e *early) recordUsageFailure(cause error) {
	if e == nil || e.lock == nil {
		return
	}
	attempt := 1
	if previous, found, err := e.dir.ReadJob(); err == nil && found {
		attempt = previous.Attempt + 1
	}
	now := time.Now()
	e.dir.WriteJob(signalfs.JobState{Attempt: attempt, Phase: signalfs.JobDone, PID: os.Getpid(),
		RestartPolicy: signalfs.RestartNever, Liveness: e.lock.Liveness(), Started: now, Updated: now,
		ExitCode: 2, Reason: signalfs.ReasonError, Message: "job-signal: " + cause.Error()})
}
