package sidecarwatch

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/job-signal/job-signal/internal/cli"
	"github.com/job-signal/job-signal/internal/proc"
	"github.com/job-signal/job-signal/signalfs"
)

// The way out, as stages of the loop (state.go): stoppingAfter (the
// --stop-after sidecars stop first), then the stop sequence: quitting and
// quitWait (--quit-url), signalled (--stop-signal, --grace), killed
// (SIGKILL to every process the sidecar left, until none is left).

// killWait bounds the wait after SIGKILL: it cannot be ignored, but a
// process stuck in the kernel (D state) can take a moment to go.
const killWait = 5 * time.Second

// stoppingMark is how long a sidecar may take to exit before "stopping"
// is recorded. Nothing waits for that phase; it tells people (status) that
// a sidecar is taking its grace period. One that exits at once goes
// straight to "stopped", with one write fewer while the others stop.
const stoppingMark = 50 * time.Millisecond

// stopSeq is what the stop sequence holds: the waiters on the
// --stop-after sidecars' locks, the quit request, and its timers.
type stopSeq struct {
	peerGone  chan error      // a --stop-after sidecar's lock was released
	waitingOn map[string]bool // the --stop-after sidecars whose lock has a waiter

	started      time.Time
	quitAnswered chan error
	slow         <-chan time.Time // stoppingMark after a step began
	poll         <-chan time.Time // after the command's exit: is the rest gone?
}

// beginStop ends the sidecar because the job is done or the Pod is
// terminating: after the --stop-after sidecars are gone, the stop
// sequence, then exit 0.
func (l *loop) beginStop(why string) {
	l.sidecar.cancelProbe()
	l.deadline = nil // a back-off, or the Pod's --grace
	l.why = why
	if len(l.cfg.stopAfter) == 0 {
		l.stopNow()
		return
	}
	l.log.Info("stopping the sidecar", "why", why, "stopAfter", l.cfg.stopAfter)
	l.to(evStopAfter)
	l.write()
	// The order each sidecar declares does not change: one search.
	if cycle := cycleFrom(l.cfg.Name, l.cfg.stopAfter, func(name string) []string { return stopEdges(l.dir.Sidecar(name)) }); cycle != nil {
		// The job is done: hanging the Pod would be worse than stopping
		// out of order.
		l.log.Error("--stop-after: stop-order cycle; stopping now, out of order", "cycle", strings.Join(cycle, " -> "))
		l.stopNow()
		return
	}
	l.log.Info("waiting for sidecars to stop first", "stopAfter", l.cfg.stopAfter, "stopAfterTimeout", l.cfg.StopAfterTimeout)
	l.deadline = cli.After(l.cfg.StopAfterTimeout)
	l.stop.peerGone = make(chan error, len(l.cfg.stopAfter))
	l.stop.waitingOn = map[string]bool{}
	l.reviewStopAfter()
}

// reviewStopAfter stops when no --stop-after sidecar runs any more, and
// otherwise waits on the lock of each that has one. Listening to the
// directory would wake every waiting sidecar-watch on every other one's
// writes, and a chain of N sidecars would cost N² wake-ups; locks cost N.
func (l *loop) reviewStopAfter() {
	p := decideStopAfter(l.cfg.stopAfter, l.dir.Sidecar)
	for _, name := range p.notRunning {
		l.logOnce(slog.LevelWarn, "--stop-after sidecar is not running: not waiting for it", "name", name, "state", l.dir.Sidecar(name).Why(l.cfg.Dir))
	}
	l.pending = p.pending
	if len(p.pending) == 0 {
		l.log.Info("sidecars stopped first; stopping now", "stopAfter", l.cfg.stopAfter)
		l.stopNow()
		return
	}
	for _, name := range p.lockWait {
		if !l.stop.waitingOn[name] {
			l.stop.waitingOn[name] = true
			free, gone := l.dir.WaitLockFree(signalfs.SidecarLockFile(name)), l.stop.peerGone
			go func() { gone <- <-free }()
		}
	}
	if !p.unlocked {
		l.w.Close() // again when already closed: nothing more
	}
}

// failWhileRunning stops the sidecar, then fails with err: sidecar-watch
// cannot go on, and what it started must not outlive it. A stop sequence
// under way goes on, and ends with the failure.
func (l *loop) failWhileRunning(code int, err error) {
	l.sidecar.cancelProbe()
	l.why, l.result = err.Error(), cli.Exit(code, err)
	l.to(evFailing)
	if !l.life.stage.stopping() {
		l.stopNow()
	}
}

// stopNow starts the stop sequence: --quit-url first if given, else the
// stop signal. Without --stop-after, the request leaves first, and only
// then does sidecar-watch stop listening to the directory, log and record:
// with many sidecars on few cores, every microsecond before the signal is
// paid by the last sidecar to stop.
func (l *loop) stopNow() {
	l.deadline, l.stop.peerGone = nil, nil
	l.stop.started = time.Now()
	if l.life.runs == runsNone {
		l.afterStopSent()
		l.endStop()
		return
	}
	if l.cfg.QuitURL == "" {
		l.sendStopSignal()
		return
	}
	l.to(evQuitPosted)
	l.stop.quitAnswered = make(chan error, 1)
	go func(answered chan<- error) { answered <- l.postQuit() }(l.stop.quitAnswered)
}

func (l *loop) onQuitAnswered(err error) {
	l.stop.quitAnswered = nil
	l.afterStopSent()
	l.to(evQuitAnswered)
	if err != nil {
		l.log.Warn("quit URL failed; using the stop signal", "url", l.cfg.QuitURL, "err", err)
		l.sendStopSignal()
		return
	}
	cli.LogAt(l.log, l.stop.started, slog.LevelInfo, "asked the sidecar to quit", "via", "quit-url", "url", l.cfg.QuitURL) // when it was asked
	l.waitStep(l.cfg.Grace)
}

func (l *loop) sendStopSignal() {
	first := !l.life.stage.requested()
	sent := time.Now() // logged after the signal, whose effects may come first
	err := l.sidecar.signalAll(l.cfg.stopSignal)
	if first {
		l.afterStopSent()
	}
	if err != nil {
		l.log.Warn("could not signal the sidecar's process group", "signal", proc.SignalName(l.cfg.stopSignal), "err", err)
	} else {
		cli.LogAt(l.log, sent, slog.LevelInfo, "sent stop signal", "via", "signal", "signal", proc.SignalName(l.cfg.stopSignal), "pgid", l.sidecar.pgid())
	}
	l.to(evSignalSent)
	l.waitStep(l.cfg.Grace)
}

// afterStopSent is what follows the first stop request (its callers
// call it once): stop listening and say why, as of when the stop began.
func (l *loop) afterStopSent() {
	if len(l.cfg.stopAfter) == 0 {
		l.w.Close()
		cli.LogAt(l.log, l.stop.started, slog.LevelInfo, "stopping the sidecar", "why", l.why)
	}
}

// waitStep arms the current step's timers, and looks at once whether the
// sidecar is gone when its command has exited already.
func (l *loop) waitStep(limit time.Duration) {
	l.deadline = time.After(limit)
	if l.life.recorded != signalfs.SidecarStopping {
		l.stop.slow = time.After(min(limit, stoppingMark))
	}
	if l.life.runs != runsCommand {
		l.onStopPoll()
	}
}

// onStopPoll ends the sequence once the command has exited and none of
// the processes it left is alive; otherwise it looks again shortly: the
// kernel gives no event for a process group becoming empty.
func (l *loop) onStopPoll() {
	if l.life.runs == runsCommand || !l.sidecar.leftGone() {
		if l.stop.poll == nil {
			l.stop.poll = time.Tick(5 * time.Millisecond)
		}
		return
	}
	if l.life.stage == quitting {
		// The sidecar quit before its answer reached the loop: the request
		// worked, and the answer's handler will not run now.
		l.log.Info("asked the sidecar to quit", "via", "quit-url", "url", l.cfg.QuitURL)
	}
	how := "sidecar stopped"
	via := map[stage]string{quitting: "quit-url", quitWait: "quit-url", signalled: "signal", killed: "kill"}[l.life.stage]
	if l.life.stage == killed {
		how = "sidecar killed"
	}
	l.log.Info(how, "via", via, "status", l.status(), "took", time.Since(l.stop.started).Round(time.Millisecond))
	l.endStop()
}

func (l *loop) onStopSlow() {
	l.stop.slow = nil
	if l.life.recorded != signalfs.SidecarStopping {
		l.to(evSlow)
		l.write()
	}
}

// onStopDeadline: the current step took too long; take the next one.
func (l *loop) onStopDeadline() {
	switch l.life.stage {
	case quitWait:
		l.log.Warn("sidecar still running after the quit URL and --grace; using the stop signal", "grace", l.cfg.Grace)
		l.sendStopSignal()
	case signalled:
		l.log.Warn("sidecar did not stop within --grace; sending SIGKILL to its process group and every process it started", "grace", l.cfg.Grace)
		l.sidecar.killAll()
		l.to(evKillSent)
		l.waitStep(killWait)
	case killed:
		// Stuck in the kernel: exiting is still right, the container's
		// end takes it down.
		l.log.Error(fmt.Sprintf("sidecar processes still present %s after SIGKILL", killWait), "pgid", l.sidecar.pgid())
		l.log.Info("sidecar killed", "via", "kill", "status", l.status(), "took", time.Since(l.stop.started).Round(time.Millisecond))
		l.endStop()
	}
}

// endStop records how the sidecar ended and finishes: exit 0, or the
// failure that made sidecar-watch stop it.
func (l *loop) endStop() {
	l.deadline, l.stop.slow, l.stop.poll = nil, nil, nil
	if l.life.runs == runsExited {
		l.state.ExitCode = l.sidecar.child.Status().ExitCode()
	}
	l.sidecar.child, l.sidecar.adopted = nil, nil
	if l.life.failing {
		l.finishFailed(l.result)
		return
	}
	l.finishStopped(l.why)
}

// postQuit POSTs to --quit-url; a 2xx answer is success.
func (l *loop) postQuit() error {
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.QuitTimeout)
	defer cancel()
	status, err := l.cfg.quit.Do(ctx, "POST")
	if err != nil {
		return err
	}
	if status < 200 || status > 299 {
		return fmt.Errorf("POST %s: status %d", l.cfg.QuitURL, status)
	}
	return nil
}

// status says how the sidecar ended, for the log.
func (l *loop) status() string {
	switch l.life.runs {
	case runsExited:
		return l.sidecar.child.Status().String()
	case runsDaemon:
		return "an adopted daemon, ended"
	}
	return "not running"
}
