package sidecarwatch

import (
	"context"
	"log/slog"
	"slices"
	"syscall"
	"time"

	"github.com/job-signal/job-signal/internal/cli"
	"github.com/job-signal/job-signal/internal/probe"
	"github.com/job-signal/job-signal/internal/proc"
)

// sidecar is the sidecar's processes across its runs: the command, its
// readiness checks, its exit, the back-off before a restart, a daemon it
// left behind and sidecar-watch adopted, and the signals of the stop
// sequence. It does no reporting: the loop writes the state it learns. Its
// channels are nil (never ready) when there is nothing to wait for.
type sidecar struct {
	cfg *Cmd
	log *slog.Logger

	child    *proc.Child // the command's current run; nil while none
	exitSeen bool        // the loop has seen child end (stopping)
	started  time.Time

	probeFailed  chan error // readiness failures of the current run
	probePassed  chan error // the current run's probe loop result
	probeCancel  context.CancelFunc
	lastRecorded time.Time // when a readiness failure was last recorded

	restartAt <-chan time.Time
	backoff   time.Duration

	// reaping: orphans are re-parented to sidecar-watch (PID 1 or
	// --subreaper), so a daemon the command leaves is adopted here.
	reaping bool
	adopted []proc.Proc // the live processes of a daemon the command left
	killed  []proc.Proc // what SIGKILL was sent to, until gone
}

// start runs COMMAND and, when there is a readiness check, starts it.
func (s *sidecar) start(restarts int) error {
	child, err := proc.Start(cli.Command(s.cfg.Command), proc.Options{Foreground: proc.OwnsTerminal()})
	if err != nil {
		return err
	}
	s.child, s.exitSeen, s.started = child, false, time.Now()
	s.log.Info("sidecar started", "pid", child.PID(), "command", cli.Command(s.cfg.Command), "restarts", restarts)
	s.startProbe()
	return nil
}

// startProbe starts checking readiness, when there is a check.
func (s *sidecar) startProbe() {
	if s.cfg.probe == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.probeCancel = cancel
	s.probeFailed = make(chan error, 1)
	s.probePassed = make(chan error, 1)
	go func(p probe.Probe, failed chan<- error, passed chan<- error) {
		passed <- probe.Loop(ctx, p, s.cfg.ReadyInterval, s.cfg.ProbeTimeout, failed)
	}(s.cfg.probe, s.probeFailed, s.probePassed)
}

// exited is closed when the running command has ended; nil when none runs
// or its end was seen.
func (s *sidecar) exited() <-chan struct{} {
	if s.child == nil || s.exitSeen {
		return nil
	}
	return s.child.Done()
}

// orphanReaped fires when an orphan was reaped, while a daemon adopted
// from the command is the sidecar.
func (s *sidecar) orphanReaped() <-chan struct{} {
	if len(s.adopted) == 0 {
		return nil
	}
	return proc.OrphanReaped()
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

// reap handles the command's end by itself: what it left in its process
// group must not outlive it, nor run twice after a restart. adopted lists
// the live processes it left that sidecar-watch adopted: a daemon.
//
// A command that exits 0 may have daemonized, and its daemon leaves the
// command's process group (setsid) only when it gets to it, maybe after
// the command's exit was seen here: so after an exit 0 every orphan is
// adopted, in the command's group or not, and the group is not killed.
func (s *sidecar) reap() (status proc.Status, adopted []proc.Proc) {
	status = s.child.Status()
	pgid := s.child.PID()
	s.child = nil
	s.cancelProbe()
	if s.reaping && status.ExitCode() == 0 {
		if adopted = proc.Orphans(0); len(adopted) > 0 {
			return status, adopted
		}
	}
	proc.KillGroup(pgid)
	if s.reaping {
		adopted = proc.Orphans(pgid)
	}
	return status, adopted
}

// adopt makes a daemon the command left the sidecar: its readiness is
// checked as the command's was, and it is stopped with the stop sequence,
// as the command would have been.
func (s *sidecar) adopt(daemon []proc.Proc) {
	s.adopted = daemon
	if len(daemon) > 0 {
		s.startProbe()
	}
}

// adoptedGone reports whether none of the adopted processes, nor anyone in
// their process groups, is alive.
func (s *sidecar) adoptedGone() bool {
	for _, p := range s.adopted {
		if p.Running() || proc.GroupAlive(p.Group()) {
			return false
		}
	}
	return true
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
	if s.child == nil || s.exitSeen {
		s.log.Info("signal not forwarded: the sidecar is not running", "signal", proc.SignalName(sig))
		return
	}
	if err := s.child.Signal(sig); err != nil {
		s.log.Warn("could not forward signal", "signal", proc.SignalName(sig), "err", err)
		return
	}
	s.log.Info("forwarded signal", "signal", proc.SignalName(sig), "pid", s.child.PID())
}

// running reports whether there is anything to stop.
func (s *sidecar) running() bool { return s.child != nil || len(s.adopted) > 0 }

// pgid is the command's process group, or the adopted daemon's.
func (s *sidecar) pgid() int {
	if s.child != nil {
		return s.child.PID()
	}
	if len(s.adopted) > 0 {
		return s.adopted[0].Group()
	}
	return 0
}

// groups are the process groups the stop signal goes to: the command's,
// and each adopted process's.
func (s *sidecar) groups() []int {
	var out []int
	if s.child != nil {
		out = append(out, s.child.PID())
	}
	for _, p := range s.adopted {
		if g := p.Group(); g > 0 && !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}

// signalAll sends sig to every group of the sidecar.
func (s *sidecar) signalAll(sig syscall.Signal) error {
	var first error
	for _, g := range s.groups() {
		if err := proc.SignalGroup(g, sig); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// killAll sends SIGKILL to the sidecar's groups and to every process
// below the command and the adopted daemon, in their own sessions too
// (PostgreSQL's backends call setsid), and, when reaping, to every orphan
// re-parented here.
func (s *sidecar) killAll() {
	var roots []int
	if s.child != nil {
		roots = append(roots, s.child.PID())
	}
	for _, p := range s.adopted {
		roots = append(roots, p.PID)
	}
	s.killed = proc.KillAll(s.groups(), roots, s.reaping)
}

// gone reports whether the command has exited and none of the processes
// it left is alive.
func (s *sidecar) gone() bool {
	if s.child != nil && (!s.exitSeen || proc.GroupAlive(s.child.PID())) {
		return false
	}
	if !s.adoptedGone() {
		return false
	}
	for _, p := range s.killed {
		if p.Running() {
			return false
		}
	}
	return true
}

// status says how the command ended, for the log.
func (s *sidecar) status() string {
	if s.child != nil && s.exitSeen {
		return s.child.Status().String()
	}
	if len(s.adopted) > 0 {
		return "an adopted daemon, ended"
	}
	return "not running"
}
