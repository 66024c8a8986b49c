package sidecarwatch

import (
	"context"
	"fmt"
	"time"

	"github.com/job-signal/job-signal/internal/proc"
	"github.com/job-signal/job-signal/signalfs"
)

// stop ends the sidecar because the job is done or the Pod is terminating:
// after the --stop-after sidecars are gone, it stops the whole process
// group and returns nil, so sidecar-watch exits 0.
//
// Without --stop-after, the signal (or quit request) leaves first, and only
// then does sidecar-watch stop listening to the directory, log and record:
// with many sidecars on few cores, every microsecond before the signal is
// paid by the last sidecar to stop.
func (s *watch) stop(why string) error {
	s.sidecar.cancelProbe()
	s.sidecar.restartAt = nil
	if len(s.cfg.stopAfter) > 0 {
		s.log.Info("stopping the sidecar", "why", why, "stopAfter", s.cfg.stopAfter)
		s.state.Phase = signalfs.SidecarStopping
		s.write()
		s.waitStopAfter()
	}
	s.endSidecar(why)
	return s.stopped(why)
}

// endSidecar stops the sidecar if it runs and records how it ended.
func (s *watch) endSidecar(why string) {
	if s.sidecar.child == nil {
		s.afterStopSent(why)
		return
	}
	child := s.sidecar.child
	s.stopChild(child, why)
	select {
	case <-child.Done():
		s.state.ExitCode = child.Status().ExitCode()
	default:
		// Stuck in the kernel even after SIGKILL (logged by stopChild):
		// exiting is still right, the container's end takes it down.
	}
	s.sidecar.child = nil
}

// afterStopSent is what follows the first stop request: stop listening
// and say why.
func (s *watch) afterStopSent(why string) {
	if len(s.cfg.stopAfter) == 0 {
		s.w.Close()
		s.log.Info("stopping the sidecar", "why", why)
	}
}

// stoppingAfter is how long a sidecar may take to exit before "stopping"
// is recorded. Nothing waits for that phase; it tells people (status) that
// a sidecar is taking its grace period. One that exits at once goes
// straight to "stopped", with one write fewer while the others stop.
const stoppingAfter = 50 * time.Millisecond

// waitStopped waits for the sidecar to be gone, at most grace, recording
// "stopping" if it takes a while.
func (s *watch) waitStopped(child *proc.Child, grace time.Duration) bool {
	deadline := time.Now().Add(grace)
	if s.waitGone(child, time.Now().Add(min(grace, stoppingAfter))) {
		return true
	}
	if s.state.Phase != signalfs.SidecarStopping {
		s.state.Phase = signalfs.SidecarStopping
		s.write()
	}
	return s.waitGone(child, deadline)
}

// stopChild asks the sidecar to quit (--quit-url, then --stop-signal to its
// process group), and SIGKILLs the group after --grace. It returns once the
// sidecar's process has ended and its group is empty, or, after SIGKILL,
// at most a few seconds later.
func (s *watch) stopChild(child *proc.Child, why string) {
	start := time.Now()
	if s.cfg.QuitURL != "" {
		err := s.postQuit()
		s.afterStopSent(why)
		if err != nil {
			s.log.Warn("quit URL failed; using the stop signal", "url", s.cfg.QuitURL, "err", err)
		} else {
			s.log.Info("asked the sidecar to quit", "via", "quit-url", "url", s.cfg.QuitURL)
			if s.waitStopped(child, s.cfg.Grace) {
				s.log.Info("sidecar stopped", "via", "quit-url", "status", child.Status().String(), "took", time.Since(start).Round(time.Millisecond))
				return
			}
			s.log.Warn("sidecar still running after the quit URL and --grace; using the stop signal", "grace", s.cfg.Grace)
		}
	}
	err := child.SignalGroup(s.cfg.stopSignal)
	if s.cfg.QuitURL == "" {
		s.afterStopSent(why)
	}
	if err != nil {
		s.log.Warn("could not signal the sidecar's process group", "signal", proc.SignalName(s.cfg.stopSignal), "err", err)
	} else {
		s.log.Info("sent stop signal", "via", "signal", "signal", proc.SignalName(s.cfg.stopSignal), "pgid", child.PID())
	}
	if s.waitStopped(child, s.cfg.Grace) {
		s.log.Info("sidecar stopped", "via", "signal", "status", child.Status().String(), "took", time.Since(start).Round(time.Millisecond))
		return
	}
	s.log.Warn("sidecar did not stop within --grace; sending SIGKILL to its process group", "grace", s.cfg.Grace)
	killGroup(child.PID())
	// SIGKILL cannot be ignored, but a process stuck in the kernel (D
	// state) can take a moment to go; do not wait for ever.
	if !s.waitGone(child, time.Now().Add(5*time.Second)) {
		s.log.Error("sidecar process group still present 5s after SIGKILL", "pgid", child.PID())
	}
	s.log.Info("sidecar killed", "via", "kill", "status", child.Status().String(), "took", time.Since(start).Round(time.Millisecond))
}

// waitGone waits until the sidecar has exited and no live process is left
// in its group, or deadline. The sidecar's exit is an event; the rest of the group
// is polled, only during a stop, because the kernel offers no event for it.
func (s *watch) waitGone(child *proc.Child, deadline time.Time) bool {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-child.Done():
	case <-timer.C:
		return false
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for proc.GroupAlive(child.PID()) {
		select {
		case <-tick.C:
		case <-timer.C:
			return false
		}
	}
	return true
}

// postQuit POSTs to --quit-url; a 2xx answer is success.
func (s *watch) postQuit() error {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.QuitTimeout)
	defer cancel()
	status, err := s.cfg.quit.Do(ctx, "POST")
	if err != nil {
		return err
	}
	if status < 200 || status > 299 {
		return fmt.Errorf("POST %s: status %d", s.cfg.QuitURL, status)
	}
	return nil
}
