package sidecarwatch

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"syscall"
	"time"

	"github.com/job-signal/job-signal/internal/cli"
	"github.com/job-signal/job-signal/internal/proc"
)

// The loop's handlers, one per event: each reads what it needs, asks a
// pure decision (decide.go, order.go) and does what it says. The stop
// sequence's own events are in stop.go.

// onDirChanged: the job's state, a lock or an ordered sidecar may have
// changed; what that means depends on the stage.
func (l *loop) onDirChanged() {
	switch s := l.life.stage; {
	case s == waiting:
		l.reviewBeforeStart()
	case s.runs():
		if d := l.observeJob(); d.stop {
			l.beginStop(d.why)
		}
	case s == stoppingAfter:
		l.reviewStopAfter()
	}
}

// onDirReplaced carries on in the directory now at --dir's path: what we
// wrote is gone with the old one. Waiting for --stop-after sidecars, there
// is nobody left to wait for: stop now.
func (l *loop) onDirReplaced() {
	if l.life.stage == stoppingAfter {
		l.log.Error("the directory was replaced while waiting for --stop-after sidecars; stopping now", "dir", l.cfg.Dir)
		l.stopNow()
		return
	}
	if err := l.reattach(); err != nil {
		l.failWhileRunning(cli.ExitFailure, err)
		return
	}
	l.onDirChanged()
}

// onJobLockFree: the job-signal holding job.lock ended or died.
func (l *loop) onJobLockFree(err error) {
	l.job.lockFree = nil
	if err != nil {
		l.logOnce(slog.LevelWarn, "cannot wait on the job's lock", "err", err)
	}
	l.onDirChanged()
}

func (l *loop) onProbeFailed(err error) {
	if !l.sidecar.probeFailureWorthRecording(err, l.state.LastError) {
		return
	}
	l.state.LastError = err.Error()
	l.write()
}

func (l *loop) onProbePassed(err error) {
	l.sidecar.probePassed = nil
	if err == nil {
		l.ready()
	}
}

// onSidecarExited: the sidecar's command ended. While running, by itself;
// while stopping, because it was asked to.
func (l *loop) onSidecarExited() {
	switch s := l.life.stage; {
	case s.stopping():
		l.to(evExited)
		l.onStopPoll()
		return
	case s == stoppingAfter:
		// Asked to stop soon anyway: note it, do not restart.
		l.to(evExited)
		l.state.ExitCode = l.sidecar.child.Status().ExitCode()
		return
	}
	ranFor := time.Since(l.sidecar.started)
	status, adopted := l.sidecar.reap()
	l.sidecarEnded(status, ranFor, adopted)
}

// onOrphanReaped: a process sidecar-watch adopted ended; when the last of
// an adopted daemon's is gone, the sidecar has ended by itself.
func (l *loop) onOrphanReaped() {
	if !l.life.stage.runs() || !l.sidecar.adoptedGone() {
		return
	}
	l.log.Warn("the sidecar's adopted daemon ended by itself")
	l.sidecar.adopted = nil
	l.sidecarEnded(proc.Status{}, time.Since(l.sidecar.started), nil)
}

// sidecarEnded decides what follows the sidecar's end by itself; adopted
// are the live processes it left that sidecar-watch adopted.
func (l *loop) sidecarEnded(status proc.Status, ranFor time.Duration, adopted []proc.Proc) {
	l.to(evEnded)
	l.state.ChildPID = 0
	l.state.ExitCode = status.ExitCode()
	l.state.LastError = "sidecar " + status.String()
	if d := l.observeJob(); d.stop {
		l.adopt(adopted)
		l.beginStop(d.why)
		return
	}
	d := decideExit(status, ranFor, l.life.terminating, l.cfg.Restart, len(adopted), l.sidecar.reaping)
	if d.note != "" {
		l.log.Warn(d.note, "status", status.String())
	}
	switch d.action {
	case exitAdopt:
		l.adopt(adopted)
	case exitStopped:
		if len(adopted) > 0 {
			l.adopt(adopted)
			l.beginStop(d.why)
			return
		}
		l.finishStopped(d.why)
	case exitFail:
		l.finishFailed(cli.Exit(d.code, errors.New(d.why)))
	case exitRestart:
		l.state.Restarts++
		l.to(evRestart)
		l.write()
		var delay time.Duration
		delay, l.sidecar.backoff = decideBackoff(l.sidecar.backoff, ranFor, l.cfg.RestartBackoff, l.cfg.RestartBackoffMax)
		l.log.Warn("sidecar ended by itself before the job was done; restarting", "status", status.String(),
			"ranFor", ranFor.Round(time.Millisecond), "restartIn", delay, "restarts", l.state.Restarts)
		l.deadline = time.After(delay)
	}
}

// adopt makes a daemon the command left the sidecar: its readiness is
// checked as the command's was, and it is stopped with the stop sequence,
// as the command would have been.
func (l *loop) adopt(daemon []proc.Proc) {
	if len(daemon) == 0 {
		return
	}
	l.sidecar.adopted = daemon
	l.to(evAdopted)
	l.sidecar.startProbe()
}

// onSignal: a termination signal means the Pod is going away; any other is
// the sidecar's, and passed on.
func (l *loop) onSignal(sig syscall.Signal) {
	switch decideSignal(sig, l.cfg.stopSignal, l.life.terminating) {
	case sigForward:
		if l.life.runs != runsCommand {
			l.log.Info("signal not forwarded: the sidecar is not running", "signal", proc.SignalName(sig))
			return
		}
		l.sidecar.forward(sig)
	case sigAgain:
	case sigStopNow:
		switch s := l.life.stage; {
		case s == waiting:
			l.finishStopped("a second INT while the Pod is terminating before the sidecar started")
		case s.runs():
			l.beginStop("a second INT while the Pod is terminating")
		case s == stoppingAfter:
			l.log.Warn("not waiting for --stop-after sidecars any more", "why", "a second INT while the Pod is terminating", "pending", l.pending)
			l.stopNow()
		}
	case sigTerminating:
		if l.life.stage.stopping() {
			return // on its way out already
		}
		l.to(evTerminating)
		if l.life.stage == waiting {
			l.finishStopped("the Pod is terminating before the sidecar started")
			return
		}
		if l.life.stage.runs() {
			l.deadline = time.After(l.cfg.Grace) // instead of a back-off: no restarts while the Pod goes away
		}
		l.log.Info("Pod terminating: the sidecar keeps serving until the job is done (a second INT stops it now)", "signal", proc.SignalName(sig), "atMost", l.cfg.Grace)
	}
}

// onDeadline: the stage's time limit is up.
func (l *loop) onDeadline() {
	l.deadline = nil
	switch s := l.life.stage; {
	case s == waiting:
		l.finishFailed(cli.Exit(cli.ExitFailure, fmt.Errorf("--after-timeout %s passed before these sidecars were ready: %s", l.cfg.AfterTimeout, strings.Join(l.pending, ", "))))
	case s == restarting && !l.life.terminating:
		l.startSidecar()
	case s.runs():
		l.beginStop(fmt.Sprintf("Pod terminating and the job not done within --grace %s", l.cfg.Grace))
	case s == stoppingAfter:
		l.log.Error("--stop-after sidecars did not stop in time; stopping now, out of order", "stopAfterTimeout", l.cfg.StopAfterTimeout, "pending", l.pending)
		l.stopNow()
	default:
		l.onStopDeadline()
	}
}

func (l *loop) onJobStartWarning() {
	l.job.warn = nil
	l.log.Warn("no job-signal has shown itself yet: is the main container run by job-signal, with the same --dir?",
		"dir", l.cfg.Dir, "waited", jobStartWarning, "jobStartTimeout", l.cfg.JobStartTimeout)
}

func (l *loop) onJobStartTimeout() {
	l.job.deadline = nil
	err := fmt.Errorf("--job-start-timeout %s: no job-signal showed itself in %s; is the main container run by job-signal, with the same --dir?", l.cfg.JobStartTimeout, l.cfg.Dir)
	l.log.Error("giving up on the job", "err", err)
	l.failWhileRunning(cli.ExitFailure, err)
}
