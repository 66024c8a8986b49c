package sidecarwatch

import (
	"time"

	"github.com/job-signal/job-signal/internal/cli"
	"github.com/job-signal/job-signal/signalfs"
)

// jobStartWarning is how long sidecar-watch waits for a job-signal to show
// itself before it says that something may be wrong.
const jobStartWarning = time.Minute

// jobWatch follows the job for the event loop: it reads the job's view,
// keeps a waiter on job.lock while a job-signal holds it (so its death,
// however sudden, wakes the loop), and runs the job-start timers until a
// job-signal shows itself. Its channels are nil (never ready) when unused.
type jobWatch struct {
	// lockFree fires when job.lock is released; non-nil while waiting.
	lockFree <-chan error
	// Until a job-signal shows itself: a warning after a minute, and
	// --job-start-timeout.
	warn, deadline         <-chan time.Time
	stopWarn, stopDeadline func() bool
}

func newJobWatch(c *Cmd) *jobWatch {
	j := &jobWatch{}
	j.warn, j.stopWarn = cli.After(jobStartWarning)
	j.deadline, j.stopDeadline = cli.After(c.JobStartTimeout)
	return j
}

// observe reads the job's view in dir and decides (decide). Its side
// effects are the bookkeeping the decision asks for: a lock waiter is
// armed when one is needed, and the job-start timers stop once a
// job-signal is known.
func (j *jobWatch) observe(dir *signalfs.Dir, terminating bool) decision {
	d := decide(dir.Job(), terminating)
	if d.waitLock && j.lockFree == nil {
		j.lockFree = dir.WaitLockFree(signalfs.JobLockFile)
	}
	if d.jobKnown {
		j.stopTimers()
	}
	return d
}

// reset forgets the lock waiter, which watched a directory that is gone.
func (j *jobWatch) reset() { j.lockFree = nil }

// warned drops the warning, which has fired.
func (j *jobWatch) warned() { j.warn = nil }

func (j *jobWatch) stopTimers() {
	j.stopWarn()
	j.stopDeadline()
	j.warn, j.deadline = nil, nil
}

func (j *jobWatch) close() { j.stopTimers() }
