//go:build soak

package soak

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/job-signal/job-signal/internal/testing/fake"
	"github.com/job-signal/job-signal/internal/testing/procinfo"
)

// logTail bounds how much of each process's output a report shows: the end
// is where a failure shows.
const logTail = 16 << 10

// report is everything about a failed lifecycle: the seed and scenario,
// what failed, and every process's output, records and the directory's
// files. Times are relative to the lifecycle's start.
func (l *lifecycle) report(o *outcome) string {
	var b strings.Builder
	b.WriteString(l.sc.String())
	fmt.Fprintf(&b, "files: %s\n", l.root)
	b.WriteString("FAILURES:\n")
	for _, f := range o.failures {
		fmt.Fprintf(&b, "  - %s\n", f)
	}
	for _, n := range o.notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	l.mu.Lock()
	wrappers := append([]*wrapper(nil), l.wrappers...)
	if !l.termAt.IsZero() {
		fmt.Fprintf(&b, "Pod termination (SIGTERM to every wrapper) at %s\n", l.rel(l.termAt))
	}
	for i, t := range l.killAt {
		fmt.Fprintf(&b, "%s SIGKILLed (OOM) at %s\n", jobName(i), l.rel(t))
	}
	if len(l.notStarted) > 0 {
		fmt.Fprintf(&b, "sidecars never started: %v\n", l.notStarted)
	}
	l.mu.Unlock()
	for _, w := range wrappers {
		status := "still running"
		if w.exitedNow() {
			status = fmt.Sprintf("%s (code %d) at %s", w.cmd.ProcessState, w.code(), l.rel(w.exited))
		}
		fmt.Fprintf(&b, "\n=== %s: pid %d started at %s, %s\n$ %s\n", w.label, w.cmd.Process.Pid, l.rel(w.started), status, strings.Join(w.args, " "))
		b.WriteString(tail(w.logPath))
	}
	b.WriteString("\n=== records (EVENT UNIXNANO DETAIL; relative time added)\n")
	recs, _ := filepath.Glob(l.path("rec", "*.log"))
	for _, p := range recs {
		fmt.Fprintf(&b, "--- %s\n", filepath.Base(p))
		events, _ := fake.ReadEvents(p)
		for _, e := range events {
			fmt.Fprintf(&b, "%s %s %s\n", l.rel(e.At), e.Kind, e.Detail)
		}
	}
	b.WriteString("=== processes the fakes became (NAME PID STARTTIME: now)\n")
	pids, _ := fake.ReadPIDs(l.path("pids"))
	for _, p := range pids {
		state := "gone"
		if p.Running() {
			state = procinfo.Describe(p.PID)
		}
		fmt.Fprintf(&b, "%s %d %d: %s\n", p.Name, p.PID, p.StartTime, state)
	}
	b.WriteString("=== --dir files\n")
	entries, _ := os.ReadDir(l.dir)
	for _, e := range entries {
		data, _ := os.ReadFile(filepath.Join(l.dir, e.Name()))
		fmt.Fprintf(&b, "--- %s\n%s", e.Name(), data)
	}
	return b.String()
}

// rel is a time relative to the lifecycle's start, for reports.
func (l *lifecycle) rel(t time.Time) string { return t.Sub(l.begun).Round(time.Microsecond).String() }

func tail(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)\n", path, err)
	}
	if len(data) > logTail {
		data = append([]byte("...\n"), data[len(data)-logTail:]...)
	}
	return string(data)
}

// String describes the scenario for a failure report.
func (sc *scenario) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "lifecycle %d, seed %d (replay: SOAK_SEED=%d SOAK_LIFECYCLES=1), kind %s, restart-policy %s, wait-for %v, pre-created dir %v, --dir from env %v\n",
		sc.Index, sc.Seed, sc.Seed, sc.Kind, sc.RestartPolicy, sc.WaitFor, sc.PreCreateDir, sc.DirFromEnv)
	if sc.Kind == kindTermination || sc.Kind == kindTermRestart {
		what, from := "Pod termination", "COMMAND started"
		if sc.Kind == kindTermRestart {
			what = "SIGTERM to attempt 1's job-signal alone"
		}
		if sc.TermEarly {
			from = "job-signal started"
		}
		fmt.Fprintf(&b, "  %s %s after %s\n", what, sc.TermAfter, from)
	}
	if sc.FullAtStart {
		b.WriteString("  the directory is filled before job-signal starts\n")
	}
	if sc.StopKill != "" {
		fmt.Fprintf(&b, "  sidecar %s's container is SIGKILLed while it stops\n", sc.StopKill)
	}
	for i, a := range sc.Attempts {
		fmt.Fprintf(&b, "  attempt %d: %+v\n", i+1, a)
	}
	for _, s := range sc.Sidecars {
		fmt.Fprintf(&b, "  sidecar %+v\n", *s)
	}
	return b.String()
}
