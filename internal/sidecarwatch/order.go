package sidecarwatch

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/job-signal/job-signal/internal/proc"
	"github.com/job-signal/job-signal/signalfs"
)

// errJobDone ends a wait because the job is done.
var errJobDone = errors.New("job done")

// waitAfter waits until every --after sidecar is ready. It returns
// errJobDone or errTerminated when there is no point starting any more, and
// an error when the order can never be met: a sidecar waited for failed, a
// cycle, or --after-timeout.
func (s *watch) waitAfter() error {
	timeout, stop := optionalTimer(s.cfg.AfterTimeout)
	defer stop()
	s.log.Info("waiting for sidecars to be ready before starting", "after", s.cfg.after, "timeout", s.cfg.AfterTimeout)
	var pending []string
	for {
		select {
		case <-s.w.C:
		case <-s.lockFree:
			s.lockFree = nil
		case <-timeout:
			return fmt.Errorf("--after-timeout %s passed before these sidecars were ready: %s", s.cfg.AfterTimeout, strings.Join(pending, ", "))
		case sig := <-s.signals:
			if proc.IsTermination(sig.(syscall.Signal)) {
				s.terminating = true
				return errTerminated
			}
			continue
		}
		if stop, _ := s.jobSaysStop(); stop {
			return errJobDone
		}
		var err error
		pending, err = s.pendingAfter()
		if err != nil {
			return err
		}
		if len(pending) == 0 {
			s.log.Info("sidecars ready; starting", "after", s.cfg.after, "waited", time.Since(s.begun).Round(time.Millisecond))
			return nil
		}
	}
}

// pendingAfter lists the --after sidecars not ready yet, each with why.
func (s *watch) pendingAfter() ([]string, error) {
	// Only sidecars still waiting to start can be stuck in a start cycle.
	startEdges := func(st signalfs.SidecarState) []string {
		if st.Phase == signalfs.SidecarWaiting {
			return st.After
		}
		return nil
	}
	if cycle := s.findCycle(startEdges, s.cfg.after); cycle != nil {
		return nil, fmt.Errorf("--after: start-order cycle %s: none of these can ever start", strings.Join(cycle, " -> "))
	}
	var pending []string
	for _, name := range s.cfg.after {
		st, found, err := s.dir.ReadSidecar(name)
		switch {
		case err != nil:
			pending = append(pending, fmt.Sprintf("%s (%v)", name, err))
		case !found:
			pending = append(pending, name+" (no state yet)")
		case st.Phase == signalfs.SidecarFailed:
			return nil, fmt.Errorf("--after: sidecar %s failed and will not become ready: %s", name, st.LastError)
		case !s.dir.SidecarAlive(st):
			pending = append(pending, fmt.Sprintf("%s (%s, but its sidecar-watch is not running: container died?)", name, st.Phase))
		case st.Phase != signalfs.SidecarReady:
			pending = append(pending, fmt.Sprintf("%s (%s)", name, st.Phase))
		}
	}
	return pending, nil
}

// waitStopAfter waits until every --stop-after sidecar is gone (stopped or
// failed), at most --stop-after-timeout. A sidecar that never wrote its
// state is not running, so it is not waited for. A cycle is reported and
// broken by stopping now: the job is done, and hanging the Pod would be
// worse than stopping out of order.
func (s *watch) waitStopAfter() {
	timeout, stop := optionalTimer(s.cfg.StopAfterTimeout)
	defer stop()
	s.log.Info("waiting for sidecars to stop first", "stop_after", s.cfg.stopAfter, "timeout", s.cfg.StopAfterTimeout)
	check := func() bool {
		// Every sidecar that has not stopped will wait for its
		// --stop-after sidecars once it learns the job is done.
		stopEdges := func(st signalfs.SidecarState) []string {
			if st.Phase.Gone() {
				return nil
			}
			return st.StopAfter
		}
		if cycle := s.findCycle(stopEdges, s.cfg.stopAfter); cycle != nil {
			s.log.Error("--stop-after: stop-order cycle; stopping now, out of order", "cycle", strings.Join(cycle, " -> "))
			return true
		}
		for _, name := range s.cfg.stopAfter {
			st, found, err := s.dir.ReadSidecar(name)
			switch {
			case err != nil:
				s.logOnce("stop-after-read:"+name, "cannot read a --stop-after sidecar's state", "name", name, "err", err)
				return false
			case !found:
				s.logOnce("stop-after-missing:"+name, "--stop-after sidecar has no state: not running, not waiting for it", "name", name)
			case st.Phase.Gone():
			case !s.dir.SidecarAlive(st):
				s.logOnce("stop-after-dead:"+name, "--stop-after sidecar's sidecar-watch is not running (container died?): not waiting for it", "name", name)
			default:
				return false
			}
		}
		return true
	}
	for !check() {
		select {
		case <-s.w.C:
		case <-timeout:
			s.log.Error("--stop-after sidecars did not stop in time; stopping now, out of order", "timeout", s.cfg.StopAfterTimeout)
			return
		}
	}
	s.log.Info("sidecars stopped first; stopping now", "stop_after", s.cfg.stopAfter)
}

// findCycle looks for a cycle reachable from this sidecar along the edges
// that edges reads from each sidecar's state (its own edges are mine, as
// the state files of others may not show them yet). It returns the cycle's
// names, or nil. Sidecars that have not written a state have no known edges.
func (s *watch) findCycle(edges func(signalfs.SidecarState) []string, mine []string) []string {
	const (
		visiting = 1
		done     = 2
	)
	mark := map[string]int{}
	var stack []string
	var visit func(name string) []string
	visit = func(name string) []string {
		switch mark[name] {
		case visiting:
			for i, n := range stack {
				if n == name {
					return append(append([]string{}, stack[i:]...), name)
				}
			}
		case done:
			return nil
		}
		mark[name] = visiting
		stack = append(stack, name)
		next := mine
		if name != s.cfg.Name {
			st, found, err := s.dir.ReadSidecar(name)
			next = nil
			if found && err == nil && s.dir.SidecarAlive(st) {
				next = edges(st)
			}
		}
		for _, n := range next {
			if c := visit(n); c != nil {
				return c
			}
		}
		stack = stack[:len(stack)-1]
		mark[name] = done
		return nil
	}
	return visit(s.cfg.Name)
}

// optionalTimer returns a channel that fires once d has passed, or nil
// (never ready) when d is 0, meaning no limit; and the function that
// releases the timer.
func optionalTimer(d time.Duration) (<-chan time.Time, func() bool) {
	if d <= 0 {
		return nil, func() bool { return false }
	}
	t := time.NewTimer(d)
	return t.C, t.Stop
}
