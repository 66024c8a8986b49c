//go:build soak

package soak

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/job-signal/job-signal/internal/procfs"
	"github.com/job-signal/job-signal/internal/testing/fake"
	"github.com/job-signal/job-signal/internal/testing/procinfo"
	"github.com/job-signal/job-signal/signalfs"
)

// outcome is what the checks of one lifecycle found, and its numbers.
type outcome struct {
	failures []string
	notes    []string

	sidecarsStarted int // sidecar-watch processes
	sidecarRuns     int // sidecar command runs, restarts included
	grandchildren   int
	// From the job's end to the first and last stop request a sidecar
	// received (signal or quit URL), where that applies.
	firstStop, lastStop time.Duration
	hasStop             bool
	// From the job's end to the last sidecar-watch's exit (the Pod can
	// complete), as the harness saw it.
	allExited    time.Duration
	hasAllExited bool

	// The faults (faults_test.go).
	kills          []jobKill
	stopKillNotice []time.Duration // killed --stop-after sidecar's death to its dependant's stop request
}

func (o *outcome) failf(format string, args ...any) {
	o.failures = append(o.failures, fmt.Sprintf(format, args...))
}

// checker holds what the checks of one lifecycle read.
type checker struct {
	l       *lifecycle
	o       *outcome
	events  map[string]fake.Events
	pids    []fake.PID
	jobEnd  time.Time // when the final attempt ended
	hasEnd  bool
	started map[string]*wrapper
}

// check runs every check on a finished lifecycle.
func (l *lifecycle) check() *outcome {
	o := &outcome{}
	c := &checker{l: l, o: o, events: map[string]fake.Events{}, started: l.sidecars}
	for _, h := range l.harness {
		o.failf("harness: %s", h)
	}
	if len(l.hung) > 0 {
		o.failf("hang: not finished within %s; still running then:\n    %s", lifecycleDeadline, strings.Join(l.hung, "\n    "))
	}
	names := []string{}
	for i := range l.sc.Attempts {
		names = append(names, jobName(i))
	}
	for _, s := range l.sc.Sidecars {
		names = append(names, s.Name)
	}
	for _, name := range names {
		events, err := fake.ReadEvents(l.recPath(name))
		if err != nil {
			o.failf("harness: read %s's records: %v", name, err)
		}
		c.events[name] = events
		for _, e := range events.Of("error") {
			o.failf("fake %s failed (harness or environment): %s", name, e.Detail)
		}
	}
	var err error
	if c.pids, err = fake.ReadPIDs(l.path("pids")); err != nil {
		o.failf("harness: read pids: %v", err)
	}
	c.findJobEnd()
	c.jobExitCodes()
	c.sidecarExitCodes()
	c.noLeaks()
	c.startOrder()
	c.stopOrder()
	c.stopTiming()
	c.stateFiles()
	c.checkFaults()
	c.count()
	return o
}

// findJobEnd is when the final attempt's main side ended: COMMAND's own
// record, or the harness's SIGKILL.
func (c *checker) findJobEnd() {
	last := len(c.l.sc.Attempts) - 1
	if last >= len(c.l.jobs) {
		return // never started: a harness failure says why
	}
	if t, ok := c.l.killAt[last]; ok {
		c.jobEnd, c.hasEnd = t, true
		return
	}
	if t, ok := c.events[jobName(last)].Of("exit").First(); ok {
		c.jobEnd, c.hasEnd = t, true
		return
	}
	// In a directory full from the start job-signal cannot record
	// anything, and the sidecars learn of its end from its lock, released
	// before the harness sees it exit: its start is the bound.
	if c.l.sc.FullAtStart {
		c.jobEnd, c.hasEnd = c.l.jobs[last].started, true
		return
	}
	// COMMAND never ran (killed at the gate by a Pod termination...):
	// job-signal's own end, as the harness saw it.
	c.jobEnd, c.hasEnd = c.l.jobs[last].exited, true
}

// expectedJobCode is the exit code attempt i's job-signal must end with.
func (c *checker) expectedJobCode(i int, a attempt) int {
	switch {
	case a.OOM:
		return 128 + int(syscall.SIGKILL)
	case c.l.sc.FullAtStart:
		return 125 // it cannot record anything
	case a.TermAlone:
		return c.termAloneCode(i, a)
	case c.l.sc.Kind == kindTermination:
		// COMMAND catches TERM once it has recorded its start; before
		// that (or if TERM reached job-signal at its gate) it is 143.
		if len(c.events[jobName(i)].Of("stop")) > 0 {
			return a.TermCode
		}
		return 128 + int(syscall.SIGTERM)
	case a.KillSelf != "":
		return 128 + int(signalNumber(a.KillSelf))
	default:
		return a.Exit
	}
}

func signalNumber(name string) syscall.Signal {
	return map[string]syscall.Signal{"KILL": syscall.SIGKILL, "TERM": syscall.SIGTERM,
		"INT": syscall.SIGINT, "HUP": syscall.SIGHUP}[name]
}

func (c *checker) jobExitCodes() {
	for i, w := range c.l.jobs {
		if !w.exitedNow() || w.killedAtDeadline {
			continue
		}
		a := c.l.sc.Attempts[i]
		want := c.expectedJobCode(i, a)
		if got := w.code(); got != want {
			c.o.failf("%s: exit code %d, want %d (%s)", jobName(i), got, want, w.cmd.ProcessState)
		}
		if sig, ok := w.signal(); ok && !a.OOM {
			termAt, termed := c.l.termAloneAt[i]
			if c.l.sc.Kind == kindTermination {
				termAt, termed = c.l.termAt, true
			}
			if !termed || sig != syscall.SIGTERM {
				c.o.failf("%s: job-signal killed by SIG%s", jobName(i), sigName(sig))
				continue
			}
			// A TERM that came before Go's runtime let job-signal catch
			// it: the code is right all the same.
			c.o.notes = append(c.o.notes, fmt.Sprintf("job-signal killed by SIGTERM before it could catch it: %s, %s after it started",
				jobName(i), termAt.Sub(w.started).Round(time.Microsecond)))
		}
	}
}

func sigName(sig syscall.Signal) string { return strings.TrimPrefix(unix.SignalName(sig), "SIG") }

// sidecarExitCodes: sidecar-watch exits 0 when it stopped its sidecar for
// the job or the Pod; a sidecar that crashes under --restart Never may
// make it exit with the sidecar's code instead, unless the job was done.
func (c *checker) sidecarExitCodes() {
	for _, s := range c.l.sc.Sidecars {
		w := c.started[s.Name]
		if w == nil || !w.exitedNow() || w.killedAtDeadline || c.skipSidecar(s) {
			continue
		}
		got := w.code()
		if got == 0 || s.mayFail() && got == s.CrashCode {
			continue
		}
		if sig, ok := w.signal(); ok && sig == syscall.SIGTERM && (c.l.sc.Kind == kindTermination || c.l.resolved) && logEmpty(w) {
			// Pod termination right after the container started, before
			// Go's runtime handed sidecar-watch the signal: nothing ran.
			c.o.notes = append(c.o.notes, fmt.Sprintf("sidecar-watch killed by SIGTERM before it could catch it: %s, %s after it started",
				s.Name, c.l.termAt.Sub(w.started).Round(time.Microsecond)))
			continue
		}
		want := "0"
		if s.mayFail() {
			want = fmt.Sprintf("0 or %d", s.CrashCode)
		}
		c.o.failf("sidecar-watch %s: exit code %d, want %s (%s)", s.Name, got, want, w.cmd.ProcessState)
	}
}

func logEmpty(w *wrapper) bool {
	info, err := os.Stat(w.logPath)
	return err == nil && info.Size() == 0
}

// noLeaks: once every wrapper has exited, no process any fake became
// (sidecar runs, grandchildren, COMMAND) is still running, and nothing with
// this lifecycle's directory on its command line is either.
func (c *checker) noLeaks() {
	if len(c.l.hung) > 0 {
		return // already killed and reported
	}
	leaked := map[int]bool{}
	for _, p := range c.pids {
		if p.Running() {
			leaked[p.PID] = true
			c.o.failf("leak: %s still running after every wrapper exited: %s", p.Name, procinfo.Describe(p.PID))
			// Clean up, so that one leak does not disturb the rest.
			killAndWait(procfs.Stat{PID: p.PID, StartTime: p.StartTime})
		}
	}
	for _, st := range procinfo.Matching(c.l.root) {
		if !leaked[st.PID] {
			c.o.failf("leak: a process of this lifecycle still running: %s", procinfo.Describe(st.PID))
		}
	}
	c.l.killMatching(c.l.root)
}

func (c *checker) rel(t time.Time) string { return c.l.rel(t) }

// noneRan reports whether every wrapper died of a signal (killed by the
// harness, or by a TERM before it could catch it).
func (c *checker) noneRan() bool {
	for _, w := range c.l.wrappers {
		if _, ok := w.signal(); !ok {
			return false
		}
	}
	return true
}

// earlyKill reports whether an earlier attempt was killed by a signal
// (SIGKILL, or a SIGTERM it could not catch yet) while it may not yet have
// written job.state.
func (c *checker) earlyKill() bool {
	for i, w := range c.l.jobs[:len(c.l.jobs)-1] {
		if _, ok := w.signal(); !ok {
			continue
		}
		wrote := slices.ContainsFunc(c.l.kills, func(k jobKill) bool {
			return k.attempt == i && slices.Contains(k.entries, signalfs.JobStateFile)
		})
		if !wrote {
			return true
		}
	}
	return false
}

func (c *checker) count() {
	c.o.sidecarsStarted = len(c.started)
	for _, p := range c.pids {
		switch {
		case strings.HasSuffix(p.Name, "-grandchild"):
			c.o.grandchildren++
		case !strings.HasPrefix(p.Name, "job-"):
			c.o.sidecarRuns++
		}
	}
}
