//go:build soak

package soak

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/job-signal/job-signal/signalfs"
	"github.com/job-signal/job-signal/soak/procfs"
)

// noticeBound is how soon after the job ended a sidecar with no
// --stop-after must be asked to stop (DESIGN.md: "within a second or two"
// for a killed job-signal; milliseconds for a done marker).
const noticeBound = 3 * time.Second

// event is one record of a workload (see workload/main.go).
type event struct {
	kind   string
	at     time.Time
	detail string
}

func readEvents(path string) ([]event, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var events []event
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		kind, rest, _ := strings.Cut(sc.Text(), " ")
		stamp, detail, _ := strings.Cut(rest, " ")
		ns, err := strconv.ParseInt(stamp, 10, 64)
		if err != nil {
			// A record cut short by a SIGKILL mid-write: rare, harmless.
			continue
		}
		events = append(events, event{kind, time.Unix(0, ns), detail})
	}
	return events, sc.Err()
}

// events of one workload (a sidecar's name or jobName(i)), filtered by kind.
type history []event

func (h history) of(kinds ...string) history {
	var out history
	for _, e := range h {
		if slices.Contains(kinds, e.kind) {
			out = append(out, e)
		}
	}
	return out
}

func (h history) first() (time.Time, bool) {
	if len(h) == 0 {
		return time.Time{}, false
	}
	t := h[0].at
	for _, e := range h[1:] {
		if e.at.Before(t) {
			t = e.at
		}
	}
	return t, true
}

func (h history) last() (time.Time, bool) {
	if len(h) == 0 {
		return time.Time{}, false
	}
	t := h[0].at
	for _, e := range h[1:] {
		if e.at.After(t) {
			t = e.at
		}
	}
	return t, true
}

// pidRecord is one process a workload became (see workload/main.go).
type pidRecord struct {
	name  string
	pid   int
	start uint64
}

func readPIDs(path string) ([]pidRecord, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var recs []pidRecord
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		pid, err1 := strconv.Atoi(f[1])
		start, err2 := strconv.ParseUint(f[2], 10, 64)
		if err1 == nil && err2 == nil {
			recs = append(recs, pidRecord{f[0], pid, start})
		}
	}
	return recs, nil
}

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
}

func (o *outcome) failf(format string, args ...any) {
	o.failures = append(o.failures, fmt.Sprintf(format, args...))
}

// checker holds what the checks of one lifecycle read.
type checker struct {
	l       *lifecycle
	o       *outcome
	events  map[string]history
	pids    []pidRecord
	jobEnd  time.Time // when the final attempt ended
	hasEnd  bool
	started map[string]*wrapper
}

// check runs every check on a finished lifecycle.
func (l *lifecycle) check() *outcome {
	o := &outcome{}
	c := &checker{l: l, o: o, events: map[string]history{}, started: l.sidecars}
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
		events, err := readEvents(l.recPath(name))
		if err != nil {
			o.failf("harness: read %s's records: %v", name, err)
		}
		c.events[name] = events
		for _, e := range history(events).of("error") {
			o.failf("workload %s failed (harness or environment): %s", name, e.detail)
		}
	}
	var err error
	if c.pids, err = readPIDs(l.path("pids")); err != nil {
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
	if t, ok := c.events[jobName(last)].of("exit").first(); ok {
		c.jobEnd, c.hasEnd = t, true
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
	case c.l.sc.Kind == kindTermination:
		// COMMAND catches TERM once it has recorded its start; before
		// that (or if TERM reached job-signal at its gate) it is 143.
		if len(c.events[jobName(i)].of("stop")) > 0 {
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
			if c.l.sc.Kind != kindTermination {
				c.o.failf("%s: job-signal killed by SIG%s", jobName(i), sigName(sig))
				continue
			}
			// A TERM that came before Go's runtime let job-signal catch
			// it: the code is right all the same.
			c.o.notes = append(c.o.notes, fmt.Sprintf("job-signal killed by SIGTERM before it could catch it: %s, %s after it started",
				jobName(i), c.l.termAt.Sub(w.started).Round(time.Microsecond)))
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
		if w == nil || !w.exitedNow() || w.killedAtDeadline {
			continue
		}
		got := w.code()
		if got == 0 || s.mayFail() && got == s.CrashCode {
			continue
		}
		if sig, ok := w.signal(); ok && sig == syscall.SIGTERM && c.l.sc.Kind == kindTermination && logEmpty(w) {
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

// noLeaks: once every wrapper has exited, no process any workload became
// (sidecar runs, grandchildren, COMMAND) is still running, and nothing with
// this lifecycle's directory on its command line is either.
func (c *checker) noLeaks() {
	if len(c.l.hung) > 0 {
		return // already killed and reported
	}
	leaked := map[int]bool{}
	for _, p := range c.pids {
		if procfs.Running(p.pid, p.start) {
			leaked[p.pid] = true
			c.o.failf("leak: %s still running after every wrapper exited: %s", p.name, procfs.Describe(p.pid))
			// Clean up, so that one leak does not disturb the rest.
			killAndWait(procfs.Stat{PID: p.pid, StartTime: p.start})
		}
	}
	for _, st := range procfs.Matching(c.l.root) {
		if !leaked[st.PID] {
			c.o.failf("leak: a process of this lifecycle still running: %s", procfs.Describe(st.PID))
		}
	}
	c.l.killMatching(c.l.root)
}

// readyAt is the first time sidecar s recorded being ready; only sidecars
// with a readiness check record a meaningful time (without one, ready is
// "started", which sidecar-watch knows before the workload runs).
func (c *checker) readyAt(s *sidecar) (time.Time, bool) {
	if s.Ready == "" {
		return time.Time{}, false
	}
	return c.events[s.Name].of("ready").first()
}

// startOrder: a sidecar's command starts only after its --after sidecars
// are ready, and COMMAND only after the --wait-for sidecars are.
func (c *checker) startOrder() {
	for _, s := range c.l.sc.Sidecars {
		began, ok := c.events[s.Name].of("start", "crash").first()
		if !ok {
			continue
		}
		for _, name := range s.After {
			c.readyBefore(name, began, "sidecar "+s.Name+" (--after)")
		}
	}
	for i := range c.l.jobs {
		began, ok := c.events[jobName(i)].of("start").first()
		if !ok {
			continue
		}
		for _, name := range c.l.sc.WaitFor {
			c.readyBefore(name, began, jobName(i)+"'s COMMAND (--wait-for)")
		}
	}
}

func (c *checker) readyBefore(name string, began time.Time, who string) {
	s := c.l.sc.sidecar(name)
	if s.Ready == "" {
		return
	}
	ready, ok := c.readyAt(s)
	switch {
	case !ok:
		c.o.failf("start order: %s started at %s but %s never recorded ready", who, c.rel(began), name)
	case !ready.Before(began):
		c.o.failf("start order: %s started at %s, before %s was ready at %s", who, c.rel(began), name, c.rel(ready))
	}
}

func (c *checker) rel(t time.Time) string { return c.l.rel(t) }

// stopOrder: a sidecar with --stop-after is asked to stop only after each
// of those sidecars has gone: after everything they recorded.
func (c *checker) stopOrder() {
	for _, s := range c.l.sc.Sidecars {
		asked, ok := c.events[s.Name].of("stop", "quit").first()
		if !ok {
			continue
		}
		for _, name := range s.StopAfter {
			last, ok := c.events[name].of("stop", "quit", "exit").last()
			if ok && !last.Before(asked) {
				c.o.failf("stop order: %s (--stop-after %s) asked to stop at %s, but %s was still active at %s",
					s.Name, name, c.rel(asked), name, c.rel(last))
			}
		}
	}
}

// stopTiming: no sidecar is asked to stop before the job has ended (except
// at Pod termination, where --grace may run out first), nor does its
// sidecar-watch exit before; a sidecar without --stop-after is asked within
// noticeBound. It also gathers the latencies of the summary.
func (c *checker) stopTiming() {
	if !c.hasEnd || c.l.sc.Kind == kindTermination {
		return
	}
	var firstStops, lastStops []time.Time
	for _, w := range c.started {
		if w.exitedNow() && w.exited.After(c.jobEnd) {
			c.o.hasAllExited = true
			c.o.allExited = max(c.o.allExited, w.exited.Sub(c.jobEnd))
		}
	}
	for _, s := range c.l.sc.Sidecars {
		stops := c.events[s.Name].of("stop", "quit")
		first, ok := stops.first()
		if w := c.started[s.Name]; w != nil && w.exitedNow() && w.exited.Before(c.jobEnd) && !s.mayFail() {
			c.o.failf("sidecar-watch %s exited at %s, before the job ended at %s", s.Name, c.rel(w.exited), c.rel(c.jobEnd))
		}
		if !ok {
			continue
		}
		if first.Before(c.jobEnd) {
			c.o.failf("sidecar %s asked to stop at %s, before the job ended at %s", s.Name, c.rel(first), c.rel(c.jobEnd))
		}
		if len(s.StopAfter) == 0 && first.Sub(c.jobEnd) > noticeBound {
			c.o.failf("sidecar %s asked to stop %s after the job ended, more than %s", s.Name, first.Sub(c.jobEnd), noticeBound)
		}
		last, _ := stops.last()
		firstStops = append(firstStops, first)
		lastStops = append(lastStops, last)
	}
	if len(firstStops) > 0 {
		c.o.hasStop = true
		c.o.firstStop = slices.MinFunc(firstStops, time.Time.Compare).Sub(c.jobEnd)
		c.o.lastStop = slices.MaxFunc(lastStops, time.Time.Compare).Sub(c.jobEnd)
	}
}

// stateFiles: what the directory says at the end agrees with what
// happened: the done marker holds the final code; each sidecar that
// sidecar-watch stopped is "stopped", each that failed is "failed".
func (c *checker) stateFiles() {
	if len(c.l.hung) > 0 || len(c.l.jobs) == 0 {
		return
	}
	dir, err := signalfs.Open(c.l.dir, false)
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
		if sw == nil || !sw.exitedNow() || logEmpty(sw) {
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

// earlyKill reports whether an earlier attempt was SIGKILLed while it may
// not yet have written job.state.
func (c *checker) earlyKill() bool {
	for _, a := range c.l.sc.Attempts[:len(c.l.jobs)-1] {
		if a.OOM && a.OOMEarly {
			return true
		}
	}
	return false
}

func (c *checker) count() {
	c.o.sidecarsStarted = len(c.started)
	for _, p := range c.pids {
		switch {
		case strings.HasSuffix(p.name, "-grandchild"):
			c.o.grandchildren++
		case !strings.HasPrefix(p.name, "job-"):
			c.o.sidecarRuns++
		}
	}
}
