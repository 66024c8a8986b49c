//go:build soak

package soak

import (
	"errors"
	"io/fs"

	"github.com/job-signal/job-signal/signalfs"
)

// The check of the directory's final state.

// stateFiles: what the directory says at the end agrees with what
// happened: the done marker holds the final code; each sidecar that
// sidecar-watch stopped is "stopped", each that failed is "failed".
func (c *checker) stateFiles() {
	if len(c.l.hung) > 0 || len(c.l.jobs) == 0 {
		return
	}
	dir, err := signalfs.Open(c.l.dir, false)
	if errors.Is(err, fs.ErrNotExist) && c.noneRan() {
		return // every wrapper was killed before it made the directory
	}
	if err != nil {
		c.o.failf("state: open --dir: %v", err)
		return
	}
	last := len(c.l.jobs) - 1
	job, found, err := dir.ReadJob()
	w := c.l.jobs[last]
	_, killedEarly := w.signal()
	switch {
	case err != nil:
		c.o.failf("state: job.state: %v", err)
	case c.l.sc.Kind == kindFull:
		c.fullJobState(job, found, w.code())
	case !found:
		// Only when job-signal was killed before it wrote anything.
		if !killedEarly {
			c.o.failf("state: no job.state although %s exited with %d", jobName(last), w.code())
		}
	case c.l.sc.Attempts[last].OOM:
		if job.Phase == signalfs.JobDone {
			c.o.failf("state: job.state says done (exit code %d) for an attempt SIGKILLed before it could say so", job.ExitCode)
		}
	case !killedEarly:
		if job.Phase != signalfs.JobDone || job.ExitCode != w.code() {
			c.o.failf("state: job.state phase %s exit code %d, want done with %d", job.Phase, job.ExitCode, w.code())
		}
		// An attempt SIGKILLed before it wrote job.state leaves no trace,
		// and the next one reuses its number: then the count is unknown.
		if want := last + 1; job.Attempt != want && !c.earlyKill() {
			c.o.failf("state: job.state attempt %d, want %d", job.Attempt, want)
		}
	}
	for _, s := range c.l.sc.Sidecars {
		sw := c.started[s.Name]
		// In a full directory a sidecar-watch cannot record its end.
		if sw == nil || !sw.exitedNow() || logEmpty(sw) || c.skipSidecar(s) || c.l.sc.Kind == kindFull {
			continue
		}
		st, found, err := dir.ReadSidecar(s.Name)
		want := signalfs.SidecarStopped
		if sw.code() != 0 {
			want = signalfs.SidecarFailed
		}
		switch {
		case err != nil:
			c.o.failf("state: sidecar %s: %v", s.Name, err)
		case !found:
			c.o.failf("state: no state for sidecar %s", s.Name)
		case st.Phase != want:
			c.o.failf("state: sidecar %s phase %s, want %s (sidecar-watch exited %d)", s.Name, st.Phase, want, sw.code())
		}
	}
}

// fullJobState checks job.state in a full lifecycle: nothing could be
// recorded when it was full from the start; otherwise a success must be
// there (its marker is written ahead and renamed into place), a failure
// may be missing (the sidecars learn of it from the released lock).
func (c *checker) fullJobState(job signalfs.JobState, found bool, code int) {
	last := len(c.l.sc.Attempts) - 1
	switch {
	case c.l.sc.FullAtStart:
		if found {
			c.o.failf("state: job.state exists although the directory was full before job-signal started")
		}
	case c.l.sc.Attempts[last].FreeSpace:
		if !found || job.Phase != signalfs.JobDone || job.ExitCode != code {
			c.o.failf("state: job.state %+v, want done with %d (space was freed before this attempt)", job, code)
		}
	case code == 0:
		if !found || job.Phase != signalfs.JobDone || job.ExitCode != 0 {
			c.o.failf("state: job.state %+v (found %v), want done with 0: a success must reach the sidecars with no space left", job, found)
		}
	case found && job.Phase == signalfs.JobDone && job.ExitCode != code:
		c.o.failf("state: job.state done with %d, want %d", job.ExitCode, code)
	}
}
