//go:build soak

package soak

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"syscall"
	"testing"
	"time"
)

// The faults this soak injects on top of random lifecycles, each drawn and checked here,
// injected in inject_test.go:
//
//   - kindFull: the directory (a 256 KiB tmpfs) fills up, before
//     job-signal starts or while COMMAND runs, under either restart policy.
//     The job's result must still reach the sidecars.
//   - kindTermRestart: under OnFailure, SIGTERM to job-signal alone (a
//     failed liveness probe), then the next attempt. The sidecars stay up
//     across it and stop after the succeeding attempt.
//   - kindStopKill: a --stop-after sidecar's sidecar-watch and sidecar are
//     SIGKILLed while stopping. Those that wait for it stop well before
//     --stop-after-timeout.
//   - kindEarlyKill: job-signal SIGKILLed in its first milliseconds. Every
//     SIGKILL of job-signal (oom and onfailure too) is sorted by whether it
//     had made an entry in the directory (jobKill).

// stopKillBound is how soon after the killed sidecar's death those that
// wait for it with --stop-after must be asked to stop; their
// --stop-after-timeout is stopKillTimeout.
const (
	stopKillBound   = 10 * time.Second
	stopKillTimeout = 50 * time.Second
)

// startSidecarsFirst: the job starts once every sidecar has recorded its
// state: a sidecar-watch cannot start in a full directory, and the killed
// --stop-after sidecar must be running when the job ends.
func startSidecarsFirst(kind string) bool { return kind == kindFull || kind == kindStopKill }

func fullAttempts(r *rand.Rand, sc *scenario, a attempt) []attempt {
	if r.IntN(2) == 0 {
		sc.RestartPolicy = "OnFailure"
	}
	if sc.FullAtStart = r.IntN(3) == 0; sc.FullAtStart {
		return []attempt{a} // job-signal cannot record anything: exit 125
	}
	a.Fill, a.Exit = true, r.IntN(4)
	if sc.RestartPolicy == "OnFailure" && a.Exit != 0 {
		// The failure is not final: once space is freed, a new attempt.
		second := secondAttempt(r)
		second.FreeSpace = true
		return []attempt{a, second}
	}
	return []attempt{a}
}

func termRestartAttempts(r *rand.Rand, sc *scenario, a attempt) []attempt {
	sc.RestartPolicy = "OnFailure"
	sc.TermEarly, sc.TermAfter = r.IntN(4) == 0, ms(r, 200)
	// COMMAND dies of the TERM or exits with a failure: a success would
	// end the Job (the kubelet does not restart a container that exits 0).
	a.TermAlone, a.TermCode = true, []int{-1, -1, 1, 2, 143}[r.IntN(5)]
	return []attempt{a, secondAttempt(r)}
}

func earlyKillAttempts(r *rand.Rand, sc *scenario, a attempt) []attempt {
	// As in a Pod, where the emptyDir is there before any container: the
	// window measured is job-signal's own.
	sc.PreCreateDir = true
	// Up to 60 ms after exec: around the window on a loaded 2-core
	// machine, where Go's start-up alone takes 5 to 15 ms.
	a.OOM, a.OOMEarly, a.OOMAfter = true, true, time.Duration(r.Int64N(int64(60*time.Millisecond)))
	if r.IntN(3) == 0 {
		sc.RestartPolicy = "OnFailure"
		return []attempt{a, secondAttempt(r)}
	}
	return []attempt{a}
}

// chooseStopKill picks the sidecar to kill while it stops: it ignores its
// stop signal with a long --grace, so it stays stopping until killed, and
// at least one other sidecar waits for it with --stop-after.
func chooseStopKill(r *rand.Rand, sc *scenario) {
	victim := sc.Sidecars[r.IntN(len(sc.Sidecars))]
	sc.StopKill = victim.Name
	victim.StopAfter, victim.After = nil, nil // asked to stop at once, started at once
	victim.Signal, victim.StopSignal, victim.OnStop = "TERM", "TERM", "ignore"
	victim.Grace, victim.Quit, victim.Crashes, victim.Never, victim.Late = stopKillTimeout, "", 0, false, false
	others := slices.DeleteFunc(slices.Clone(sc.Sidecars), func(s *sidecar) bool { return s == victim })
	// The victim has no --stop-after, so no cycle can go through it.
	if w := others[r.IntN(len(others))]; !slices.Contains(w.StopAfter, victim.Name) {
		w.StopAfter = append(w.StopAfter, victim.Name)
	}
	for _, s := range others {
		if slices.Contains(s.StopAfter, victim.Name) {
			s.StopAfterTimeout = stopKillTimeout
			if s.Signal == "KILL" { // a stop request the fake can record
				s.Signal, s.StopSignal = "TERM", "TERM"
			}
		}
	}
}

// checkFaults checks what only the faults need.
func (c *checker) checkFaults() {
	for _, k := range c.l.kills {
		if !k.before() && !slices.Contains(k.entries, "job.lock") {
			c.o.failf("%s SIGKILLed %s after exec left %v but no job.lock: the sidecars cannot learn of its death",
				jobName(k.attempt), k.delay.Round(time.Microsecond), k.entries)
		}
		c.o.kills = append(c.o.kills, k)
	}
	if c.l.resolved {
		// Nothing told the sidecars that a job-signal ever ran: they
		// waited until the Pod was deleted.
		for _, s := range c.l.sc.Sidecars {
			if t, ok := c.events[s.Name].Of("stop", "quit").First(); ok && t.Before(c.l.termAt) {
				c.o.failf("early kill: sidecar %s asked to stop at %s, before the Pod was deleted at %s, though job-signal had left no entry",
					s.Name, c.rel(t), c.rel(c.l.termAt))
			}
			if w := c.started[s.Name]; w != nil && w.exitedNow() && w.exited.Before(c.l.termAt) && !s.mayFail() {
				c.o.failf("early kill: sidecar-watch %s exited at %s, before the Pod was deleted at %s, though job-signal had left no entry",
					s.Name, c.rel(w.exited), c.rel(c.l.termAt))
			}
		}
	}
	if c.l.stopKillNote != "" {
		c.o.notes = append(c.o.notes, c.l.stopKillNote)
	}
	if c.l.stopKillAt.IsZero() {
		return
	}
	for _, s := range c.l.sc.Sidecars {
		if !slices.Contains(s.StopAfter, c.l.sc.StopKill) || c.started[s.Name] == nil {
			continue
		}
		asked, ok := c.events[s.Name].Of("stop", "quit").First()
		switch {
		case !ok && len(c.events[s.Name].Of("start")) > 0 && len(c.events[s.Name].Of("exit")) == 0:
			c.o.failf("stop-kill: %s (--stop-after %s) never asked to stop after %s was killed", s.Name, c.l.sc.StopKill, c.l.sc.StopKill)
		case ok && asked.Sub(c.l.stopKillAt) > stopKillBound:
			c.o.failf("stop-kill: %s (--stop-after %s, --stop-after-timeout %s) asked to stop %s after %s was killed, more than %s",
				s.Name, c.l.sc.StopKill, stopKillTimeout, asked.Sub(c.l.stopKillAt), c.l.sc.StopKill, stopKillBound)
		case ok:
			c.o.stopKillNotice = append(c.o.stopKillNotice, asked.Sub(c.l.stopKillAt))
		}
	}
}

// skipSidecar: the sidecar the harness killed has no exit code or final
// state to check.
func (c *checker) skipSidecar(s *sidecar) bool {
	return s.Name == c.l.sc.StopKill && !c.l.stopKillAt.IsZero()
}

// termAloneCode is the exit code of an attempt whose job-signal alone got
// SIGTERM: COMMAND's code if it caught it, else 143.
func (c *checker) termAloneCode(i int, a attempt) int {
	if len(c.events[jobName(i)].Of("stop")) > 0 && a.TermCode >= 0 {
		return a.TermCode
	}
	return 128 + int(syscall.SIGTERM)
}

// summarizeFaults prints what the faults' lifecycles showed.
func summarizeFaults(t *testing.T, scenarios []*scenario, outcomes []*outcome) {
	var full, fullAtStart, fullOnFailure, termRestart, stopKills int
	var notice []time.Duration
	type tally struct{ before, after []time.Duration }
	kills := map[bool]*tally{true: {}, false: {}} // by: kind is earlykill
	for i, sc := range scenarios {
		switch sc.Kind {
		case kindFull:
			full++
			if sc.FullAtStart {
				fullAtStart++
			}
			if sc.RestartPolicy == "OnFailure" {
				fullOnFailure++
			}
		case kindTermRestart:
			termRestart++
		case kindStopKill:
			if len(outcomes[i].stopKillNotice) > 0 {
				stopKills++
			}
		}
		notice = append(notice, outcomes[i].stopKillNotice...)
		for _, k := range outcomes[i].kills {
			tl := kills[sc.Kind == kindEarlyKill]
			if k.before() {
				tl.before = append(tl.before, k.delay)
			} else {
				tl.after = append(tl.after, k.delay)
			}
		}
	}
	t.Logf("soak summary: full directory: %d lifecycles (%d full before job-signal started, %d filled by COMMAND; %d under OnFailure)",
		full, fullAtStart, full-fullAtStart, fullOnFailure)
	t.Logf("soak summary: SIGTERM to job-signal alone, then a new attempt (OnFailure): %d lifecycles", termRestart)
	t.Logf("soak summary: --stop-after sidecar SIGKILLed while stopping: %d lifecycles; its dependants asked to stop after its death (n=%d): %s (--stop-after-timeout %s)",
		stopKills, len(notice), percentiles(notice), stopKillTimeout)
	e, o := kills[true], kills[false]
	t.Logf("soak summary: early kills (SIGKILL 0-60ms after exec): %d before job-signal's first entry (exec to kill: %s), %d after (%s)",
		len(e.before), spread(e.before), len(e.after), spread(e.after))
	t.Logf("soak summary: other SIGKILLs of job-signal (oom, onfailure): %d before its first entry (%s), %d after",
		len(o.before), spread(o.before), len(o.after))
}

// spread is the minimum, median and maximum.
func spread(d []time.Duration) string {
	if len(d) == 0 {
		return "none"
	}
	d = slices.Clone(d)
	slices.Sort(d)
	r := func(x time.Duration) string { return x.Round(10 * time.Microsecond).String() }
	return fmt.Sprintf("min %s, p50 %s, max %s", r(d[0]), r(d[(len(d)-1)/2]), r(d[len(d)-1]))
}
