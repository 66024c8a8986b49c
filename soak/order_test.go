//go:build soak

package soak

import (
	"slices"
	"time"

	"github.com/job-signal/job-signal/internal/testing/fake"
)

// The checks of order and timing: start order, stop order, stop timing.

// noticeBound is how soon after the job ended a sidecar with no
// --stop-after must be asked to stop (docs/design.md: "within a second or two"
// for a killed job-signal; milliseconds for a done marker).
const noticeBound = 3 * time.Second

// readyAt is the first time sidecar s recorded being ready; only sidecars
// with a readiness check record a meaningful time (without one, ready is
// "started", which sidecar-watch knows before the fake runs).
func (c *checker) readyAt(s *sidecar) (time.Time, bool) {
	if s.Ready == "" {
		return time.Time{}, false
	}
	return c.events[s.Name].Of("ready").First()
}

// startOrder: a sidecar's command starts only after its --after sidecars
// are ready, and COMMAND only after the --wait-for sidecars are.
func (c *checker) startOrder() {
	check := func(who string, began fake.Events, waitsFor []string) {
		if at, ok := began.First(); ok {
			for _, name := range waitsFor {
				c.readyBefore(name, at, who)
			}
		}
	}
	for _, s := range c.l.sc.Sidecars {
		check("sidecar "+s.Name+" (--after)", c.events[s.Name].Of("start", "crash"), s.After)
	}
	for i := range c.l.jobs {
		check(jobName(i)+"'s COMMAND (--wait-for)", c.events[jobName(i)].Of("start"), c.l.sc.WaitFor)
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

// stopOrder: a sidecar with --stop-after is asked to stop only after each
// of those sidecars has gone: after everything they recorded.
func (c *checker) stopOrder() {
	for _, s := range c.l.sc.Sidecars {
		asked, ok := c.events[s.Name].Of("stop", "quit").First()
		if !ok {
			continue
		}
		for _, name := range s.StopAfter {
			last, ok := c.events[name].Of("stop", "quit", "exit").Last()
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
	if !c.hasEnd || c.l.sc.Kind == kindTermination || c.l.resolved {
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
		stops := c.events[s.Name].Of("stop", "quit")
		first, ok := stops.First()
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
		last, _ := stops.Last()
		firstStops = append(firstStops, first)
		lastStops = append(lastStops, last)
	}
	if len(firstStops) > 0 {
		c.o.hasStop = true
		c.o.firstStop = slices.MinFunc(firstStops, time.Time.Compare).Sub(c.jobEnd)
		c.o.lastStop = slices.MaxFunc(lastStops, time.Time.Compare).Sub(c.jobEnd)
	}
}
