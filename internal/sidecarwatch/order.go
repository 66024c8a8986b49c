package sidecarwatch

import (
	"fmt"
	"log/slog"
	"strings"
	"syscall"
	"time"

	"github.com/job-signal/job-signal/internal/cli"
	"github.com/job-signal/job-signal/signalfs"
	"github.com/job-signal/job-signal/signalfs/sidecarname"
)

// errStopBeforeStart ends the wait for --after sidecars: the sidecar will
// not be needed (the job is over, or the Pod is terminating).
type errStopBeforeStart struct{ why string }

func (e errStopBeforeStart) Error() string { return e.why }

// waitAfter waits until every --after sidecar is ready. It returns
// errStopBeforeStart when there is no point starting any more, and an error
// when the order can never be met: a sidecar waited for stopped or failed
// for good, a cycle, or --after-timeout.
func (s *watch) waitAfter() error {
	timeout, stop := cli.After(s.cfg.AfterTimeout)
	defer stop()
	s.log.Info("waiting for sidecars to be ready before starting", "after", s.cfg.after, "afterTimeout", s.cfg.AfterTimeout)
	var pending []string
	for {
		select {
		case <-s.w.C:
		case <-s.w.Replaced:
			if err := s.reattach(); err != nil {
				return err
			}
		case <-s.job.lockFree:
			s.job.lockFree = nil
		case <-timeout:
			return fmt.Errorf("--after-timeout %s passed before these sidecars were ready: %s", s.cfg.AfterTimeout, strings.Join(pending, ", "))
		case sig := <-s.signals:
			if stop, why := s.onSignal(sig.(syscall.Signal)); stop {
				return errStopBeforeStart{why}
			}
			if s.terminating {
				return errStopBeforeStart{"the Pod is terminating"}
			}
			continue
		}
		if d := s.observeJob(); d.stop {
			return errStopBeforeStart{d.why}
		}
		var err error
		if pending, err = s.pendingAfter(); err != nil {
			return err
		}
		if len(pending) == 0 {
			s.log.Info("sidecars ready; starting", "after", s.cfg.after, "waited", time.Since(s.begun).Round(time.Millisecond))
			return nil
		}
	}
}

// pendingAfter lists the --after sidecars not ready yet, each with why.
// Each sidecar is read once per call, for the cycle search and the
// classification alike.
func (s *watch) pendingAfter() ([]string, error) {
	views := map[string]signalfs.SidecarView{}
	view := func(name string) signalfs.SidecarView {
		v, ok := views[name]
		if !ok {
			v = s.dir.Sidecar(name)
			views[name] = v
		}
		return v
	}
	if cycle := cycleFrom(s.cfg.Name, s.cfg.after, func(name string) []string { return startEdges(view(name)) }); cycle != nil {
		return nil, fmt.Errorf("--after: start-order cycle %s: none of these can ever start", strings.Join(cycle, " -> "))
	}
	var pending []string
	for _, name := range s.cfg.after {
		v := view(name)
		switch {
		case v.Ready():
		case v.Condition == signalfs.SidecarIsStopped && v.State.Terminating:
			// It got the Pod's TERM before we handled ours: the Pod is
			// going away, as at the ready gate.
			s.terminating = true
			return nil, errStopBeforeStart{fmt.Sprintf("the Pod is terminating (sidecar %s stopped for it)", name)}
		case v.NeverReady():
			return nil, fmt.Errorf("--after: sidecar %s will not become ready (%s)", name, v.Why(s.cfg.Dir))
		default:
			pending = append(pending, fmt.Sprintf("%s (%s)", name, v.Why(s.cfg.Dir)))
		}
	}
	return pending, nil
}

// startEdges are the --after sidecars a sidecar still waits for: only one
// waiting to start can be stuck in a start cycle.
func startEdges(v signalfs.SidecarView) []string {
	if v.Condition == signalfs.SidecarPending && v.State.Phase == signalfs.SidecarWaiting {
		return v.State.After
	}
	return nil
}

// stopEdges are the --stop-after sidecars a sidecar will wait for once the
// job is done: none once it is gone.
func (s *watch) stopEdges(name string) []string {
	v := s.dir.Sidecar(name)
	if v.Gone() {
		return nil
	}
	return v.State.StopAfter
}

// waitStopAfter waits until every --stop-after sidecar is gone (stopped,
// failed, dead, or never started), at most --stop-after-timeout. A sidecar
// whose sidecar-watch dies while it waits is noticed at once: its lock is
// waited on, as the job's is. A cycle is reported and broken by stopping
// now: the job is done, and hanging the Pod would be worse than stopping
// out of order. The cycle search runs once: the order each sidecar declares
// does not change.
//
// The wait listens to the sidecars' locks, not to the directory: a sidecar
// that stops writes "stopped" and then exits, releasing its lock, so the
// release says all there is to know. Listening to the directory would wake
// every waiting sidecar-watch on every other one's writes, and a chain of N
// sidecars would cost N² wake-ups; this way it costs N. Only a sidecar
// whose lock is not honoured (liveness=none) needs the directory's events.
func (s *watch) waitStopAfter() {
	if cycle := cycleFrom(s.cfg.Name, s.cfg.stopAfter, s.stopEdges); cycle != nil {
		s.log.Error("--stop-after: stop-order cycle; stopping now, out of order", "cycle", strings.Join(cycle, " -> "))
		return
	}
	timeout, stop := cli.After(s.cfg.StopAfterTimeout)
	defer stop()
	s.log.Info("waiting for sidecars to stop first", "stopAfter", s.cfg.stopAfter, "stopAfterTimeout", s.cfg.StopAfterTimeout)
	deaths := make(chan error, len(s.cfg.stopAfter))
	waiting := map[string]bool{} // sidecars whose lock is waited on
	for listening := true; ; {
		pending, unlocked := s.pendingStopAfter(deaths, waiting)
		if len(pending) == 0 {
			s.log.Info("sidecars stopped first; stopping now", "stopAfter", s.cfg.stopAfter)
			return
		}
		if listening && !unlocked {
			s.w.Close()
			listening = false
		}
		select {
		case <-s.w.C:
		case <-deaths:
		case <-s.w.Replaced:
			s.log.Error("the directory was replaced while waiting for --stop-after sidecars; stopping now", "dir", s.cfg.Dir)
			return
		case <-timeout:
			s.log.Error("--stop-after sidecars did not stop in time; stopping now, out of order", "stopAfterTimeout", s.cfg.StopAfterTimeout, "pending", pending)
			return
		case sig := <-s.signals:
			if stop, why := s.onSignal(sig.(syscall.Signal)); stop {
				s.log.Warn("not waiting for --stop-after sidecars any more", "why", why, "pending", pending)
				return
			}
		}
	}
}

// pendingStopAfter lists the --stop-after sidecars still running, and arms
// a waiter on the lock of each, once, so that its end wakes us. unlocked
// says that one of them has no honoured lock to wait on.
func (s *watch) pendingStopAfter(deaths chan<- error, waiting map[string]bool) (pending []string, unlocked bool) {
	for _, name := range s.cfg.stopAfter {
		v := s.dir.Sidecar(name)
		if v.Gone() {
			if v.Condition == signalfs.SidecarDead || v.Condition == signalfs.SidecarMissing {
				s.logOnce(slog.LevelWarn, "--stop-after sidecar is not running: not waiting for it", "name", name, "state", v.Why(s.cfg.Dir))
			}
			continue
		}
		pending = append(pending, name)
		switch {
		case v.State.Liveness != signalfs.LivenessFlock:
			unlocked = true
		case !waiting[name]:
			waiting[name] = true
			free := s.dir.WaitLockFree(signalfs.SidecarLockFile(name))
			go func() { deaths <- <-free }()
		}
	}
	return pending, unlocked
}

// cycleFrom looks for a cycle through the ordering reachable from this
// sidecar: its own edges are mine (the state files of others may not show
// them yet), every other sidecar's come from edges(name).
func cycleFrom(self string, mine []string, edges func(name string) []string) []string {
	return sidecarname.FindCycle([]string{self}, func(name string) []string {
		if name == self {
			return mine
		}
		return edges(name)
	})
}
