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
// readiness checks, a daemon it left behind and sidecar-watch adopted, and
// the signals of the stop sequence. What of it runs is the loop's state
// (life.runs); this holds the processes and does no reporting: the loop
// writes the state it learns. Its channels are nil (never ready) when
// there is nothing to wait for.
type sidecar struct {
	cfg *Cmd
	log *slog.Logger

	child   *proc.Child // the command's current (or last) run; nil while none
	started time.Time

	probeFailed  chan error // readiness failures of the current run
	probePassed  chan error // the current run's probe loop result
	probeCancel  context.CancelFunc
	lastRecorded time.Time // when a readiness failure was last recorded

	backoff time.Duration // the restart timer's next delay (decideBackoff)

	// reaping: orphans are re-parented to sidecar-watch (PID 1 or
	// --subreaper), so a daemon the command leaves is adopted here.
	reaping bool
	adopted []proc.Proc // the live processes of a daemon the command left
	killed  []proc.Proc // what SIGKILL was sent to, until gone
}

// start runs COMMAND and, when there is a readiness check, starts it.
func (s *sidecar) start(restarts int) error {
	at := time.Now() // what the command writes comes after its start
	child, err := proc.Start(cli.Command(s.cfg.Command), proc.Options{Foreground: proc.OwnsTerminal()})
	if err != nil {
		return err
	}
	s.child, s.started = child, time.Now()
	cli.LogAt(s.log, at, slog.LevelInfo, "sidecar started", "pid", child.PID(), "command", cli.Command(s.cfg.Command), "restarts", restarts)
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

func (s *sidecar) cancelProbe() {
	if s.probeCancel != nil {
		s.probeCancel()
		s.probeCancel = nil
	}
	s.probeFailed, s.probePassed = nil, nil
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

// forward passes a signal that is not a stop on to the running command.
func (s *sidecar) forward(sig syscall.Signal) {
	if err := s.child.Signal(sig); err != nil {
		s.log.Warn("could not forward signal", "signal", proc.SignalName(sig), "err", err)
		return
	}
	s.log.Info("forwarded signal", "signal", proc.SignalName(sig), "pid", s.child.PID())
}

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

// leftGone reports whether none of the processes the command left, the
// daemon adopted and those SIGKILL was sent to is alive (the command
// itself may be: the loop knows whether it ended).
func (s *sidecar) leftGone() bool {
	if s.child != nil && proc.GroupAlive(s.child.PID()) || !s.adoptedGone() {
		return false
	}
	for _, p := range s.killed {
		if p.Running() {
			return false
		}
	}
	return true
}
