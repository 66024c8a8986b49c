package sidecarwatch

import (
	"context"
	"log/slog"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/job-signal/job-signal/internal/cli"
	"github.com/job-signal/job-signal/internal/probe"
	"github.com/job-signal/job-signal/internal/proc"
)

// sidecar is the sidecar's command across its runs: starting it, checking
// readiness, noticing its exit, and the back-off before a restart. It does
// no reporting; the event loop (run.go) writes the state it learns. Its
// channels are nil (never ready) when there is nothing to wait for.
type sidecar struct {
	cfg *Cmd
	log *slog.Logger

	child   *proc.Child // nil while not running
	started time.Time

	probeFailed  chan error // readiness failures of the current run
	probePassed  chan error // the current run's probe loop result
	probeCancel  context.CancelFunc
	lastRecorded time.Time // when a readiness failure was last recorded

	restartAt <-chan time.Time
	backoff   time.Duration
}

func newSidecar(c *Cmd, log *slog.Logger) *sidecar {
	return &sidecar{cfg: c, log: log, backoff: c.RestartBackoff}
}

// start runs COMMAND and, when there is a readiness check, starts it.
func (s *sidecar) start(restarts int) error {
	child, err := proc.Start(cli.Command(s.cfg.Command), proc.Options{Foreground: proc.OwnsTerminal()})
	if err != nil {
		return err
	}
	s.child, s.started = child, time.Now()
	s.log.Info("sidecar started", "pid", child.PID(), "command", cli.Command(s.cfg.Command), "restarts", restarts)
	if s.cfg.probe == nil {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.probeCancel = cancel
	s.probeFailed = make(chan error, 1)
	s.probePassed = make(chan error, 1)
	go func(p probe.Probe, failed chan<- error, passed chan<- error) {
		passed <- probe.Loop(ctx, p, s.cfg.ReadyInterval, s.cfg.ProbeTimeout, failed)
	}(s.cfg.probe, s.probeFailed, s.probePassed)
	return nil
}

// exited is closed when the running command has ended; nil when none runs.
func (s *sidecar) exited() <-chan struct{} {
	if s.child == nil {
		return nil
	}
	return s.child.Done()
}

func (s *sidecar) cancelProbe() {
	if s.probeCancel != nil {
		s.probeCancel()
		s.probeCancel = nil
	}
	s.probeFailed, s.probePassed = nil, nil
}

func (s *sidecar) logReady() {
	s.cancelProbe()
	how := "started (no readiness check)"
	if s.cfg.probe != nil {
		how = s.cfg.probe.String() + " passed"
	}
	s.log.Info("sidecar ready", "how", how, "took", time.Since(s.started).Round(time.Millisecond))
}

// probeFailureWorthRecording limits the state writes for readiness
// failures: a new message, at most once a second.
func (s *sidecar) probeFailureWorthRecording(err error, last string) bool {
	msg := err.Error()
	if msg == last || time.Since(s.lastRecorded) < time.Second {
		return false
	}
	s.lastRecorded = time.Now()
	s.log.Debug("sidecar not ready yet", "check", s.cfg.probe.String(), "err", msg)
	return true
}

// reap handles the command's end: what it started must not outlive it, nor
// run twice after a restart.
func (s *sidecar) reap() proc.Status {
	status := s.child.Status()
	killGroup(s.child.PID())
	s.child = nil
	s.cancelProbe()
	return status
}

// scheduleRestart arms the restart after the back-off: it doubles after
// each quick failure, and starts over after a run at least as long as its
// maximum.
func (s *sidecar) scheduleRestart(status proc.Status, restarts int) {
	ran := time.Since(s.started)
	if ran >= s.cfg.RestartBackoffMax {
		s.backoff = s.cfg.RestartBackoff
	}
	delay := s.backoff
	s.backoff = min(2*s.backoff, s.cfg.RestartBackoffMax)
	s.log.Warn("sidecar ended by itself before the job was done; restarting", "status", status.String(),
		"ranFor", ran.Round(time.Millisecond), "restartIn", delay, "restarts", restarts)
	s.restartAt = time.After(delay)
}

// forward passes a signal that is not a stop on to the command.
func (s *sidecar) forward(sig syscall.Signal) {
	if s.child == nil {
		s.log.Info("signal not forwarded: the sidecar is not running", "signal", proc.SignalName(sig))
		return
	}
	if err := s.child.Signal(sig); err != nil {
		s.log.Warn("could not forward signal", "signal", proc.SignalName(sig), "err", err)
		return
	}
	s.log.Info("forwarded signal", "signal", proc.SignalName(sig), "pid", s.child.PID())
}

func killGroup(pgid int) { unix.Kill(-pgid, syscall.SIGKILL) }
