package sidecarwatch

import (
	"log/slog"
	"time"

	"github.com/job-signal/job-signal/signalfs"
)

// jobStartWarning is how long sidecar-watch waits for a job-signal to show
// itself before it says that something may be wrong.
const jobStartWarning = time.Minute

// jobWatch is the loop's hold on the job: a waiter on job.lock while a
// job-signal holds it (so its death, however sudden, wakes the loop), and
// the job-start timers until a job-signal shows itself. Its channels are
// nil (never ready) when unused.
type jobWatch struct {
	lockFree       <-chan error     // job.lock released; non-nil while waiting
	warn, deadline <-chan time.Time // a warning after a minute; --job-start-timeout
}

// observeJob reads the job's view and decides (decide). Its side effects
// are the bookkeeping the decision asks for: a lock waiter is armed when
// one is needed, the job-start timers are dropped once a job-signal is
// known, and a note is logged once.
func (l *loop) observeJob() decision {
	d := decide(l.dir.Job(), l.life.terminating)
	if d.waitLock && l.job.lockFree == nil {
		l.job.lockFree = l.dir.WaitLockFree(signalfs.JobLockFile)
	}
	if d.jobKnown {
		l.job.warn, l.job.deadline = nil, nil
	}
	if d.note != "" {
		l.logOnce(slog.LevelWarn, d.note)
	}
	return d
}
