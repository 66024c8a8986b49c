package sidecarwatch

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"syscall"
	"time"

	"github.com/job-signal/job-signal/internal/cli"
	"github.com/job-signal/job-signal/internal/proc"
	"github.com/job-signal/job-signal/internal/version"
	"github.com/job-signal/job-signal/signalfs"
)

// loop is one sidecar-watch run. run, on the goroutine that called Run,
// owns every field; the watcher, the child's waiter, the probe, the quit
// request and the lock waiters only send on the channels it reads. Its
// state is life; besides it, the loop holds resources (the directory, its
// lock and watcher, the sidecar's processes, timers and channels, each
// nil, never ready, when unused) and what it reports.
type loop struct {
	cfg    *Cmd
	log    *slog.Logger
	begun  time.Time
	logged map[string]bool // messages logged once (logOnce)

	life life // the one state (state.go)

	// What it reports: the state file, why the sidecar stops, the sidecars
	// the last --after or --stop-after review still waits for (with why),
	// and sidecar-watch's end.
	state   signalfs.SidecarState
	why     string
	pending []string
	result  error

	signals chan os.Signal
	dir     *signalfs.Dir
	lock    *signalfs.Lock // held for life: its release tells the others we died
	w       *signalfs.Watcher
	sidecar sidecar  // the sidecar's processes and its readiness checks
	job     jobWatch // the job's lock waiter and job-start timers
	stop    stopSeq  // the stop sequence's timers and waiters
	// deadline is the stage's time limit (onDeadline): --after-timeout
	// while waiting, the back-off while restarting, --grace while the Pod
	// terminates and the sidecar runs, --stop-after-timeout, and the limit
	// of each step of the stop sequence.
	deadline <-chan time.Time
}

// jobStartWarning is how long sidecar-watch waits for a job-signal to show
// itself before it says that something may be wrong.
const jobStartWarning = time.Minute

// jobWatch is the loop's hold on the job: a waiter on job.lock while a
// job-signal holds it (so its death, however sudden, wakes the loop), and
// the job-start timers until a job-signal shows itself. Its channels are
// nil (never ready) when unused.
type jobWatch struct {
	lockFree       <-chan error     // job.lock released; non-nil while waiting
	warn, deadline <-chan time.Time // a warning after a minute; --job-start-timeout
}

// observeJob reads the job's view and decides (decide). Its side effects
// are the bookkeeping the decision asks for: a lock waiter is armed when
// one is needed, the job-start timers are dropped once a job-signal is
// known, and a note is logged once.
func (l *loop) observeJob() decision {
	d := decide(l.dir.Job(), l.life.terminating)
	if d.waitLock && l.job.lockFree == nil {
		l.job.lockFree = l.dir.WaitLockFree(signalfs.JobLockFile)
	}
	if d.jobKnown {
		l.job.warn, l.job.deadline = nil, nil
	}
	if d.note != "" {
		l.logOnce(slog.LevelWarn, d.note)
	}
	return d
}

// Run is sidecar-watch's main path.
func (c *Cmd) Run(env *cli.Env) error {
	proc.SetUpReaping(c.Subreaper, env.Log)
	l := &loop{cfg: c, log: env.Log, signals: env.Signals, begun: time.Now(), logged: map[string]bool{}}
	l.life = newLife(len(c.after) > 0)
	l.state = signalfs.SidecarState{Name: c.Name, PID: os.Getpid(),
		Version: version.String(), After: c.after, StopAfter: c.stopAfter, ExitCode: -1}
	if err := l.attach(); err != nil {
		return err
	}
	defer func() { l.w.Close(); l.lock.Release(); l.dir.Close() }()
	l.sidecar = sidecar{cfg: c, log: l.log, backoff: c.RestartBackoff, reaping: proc.Reaping()}
	l.job.warn, l.job.deadline = time.After(jobStartWarning), cli.After(c.JobStartTimeout)
	defer l.sidecar.cancelProbe()
	l.log.Info("sidecar-watch starting", "dir", c.Dir, "watch", l.w.Mode(), "after", c.after, "stopAfter", c.stopAfter)
	// The wait before the command: the watcher's first notice (the scan
	// after the watch was set) shows whether the job is over already, and
	// the --after sidecars must be ready.
	if len(c.after) > 0 {
		l.log.Info("waiting for sidecars to be ready before starting", "after", c.after, "afterTimeout", c.AfterTimeout)
		l.deadline = cli.After(c.AfterTimeout)
	}
	return l.run()
}

// run is the event loop: one select over every event sidecar-watch reacts
// to, each handed to its handler (handle.go). A channel that does not
// apply in the current state is nil, and never ready.
func (l *loop) run() error {
	for !l.life.stage.finished() {
		select {
		case <-l.w.C: // a file of interest may have changed
			l.onDirChanged()
		case <-l.w.Replaced: // --dir was removed, maybe made again
			l.onDirReplaced()
		case err := <-l.job.lockFree: // job.lock released: job-signal ended or died
			l.onJobLockFree(err)
		case <-l.stop.peerGone: // a --stop-after sidecar's lock was released
			l.onDirChanged()
		case err := <-l.sidecar.probeFailed: // a readiness check failed
			l.onProbeFailed(err)
		case err := <-l.sidecar.probePassed: // the readiness checks ended
			l.onProbePassed(err)
		case <-l.exited(): // the sidecar's command ended
			l.onSidecarExited()
		case <-l.orphanReaped(): // a process of an adopted daemon ended
			l.onOrphanReaped()
		case sig := <-l.signals: // a signal to sidecar-watch
			l.onSignal(sig.(syscall.Signal))
		case <-l.deadline: // the stage's time limit
			l.onDeadline()
		case <-l.job.warn: // no job-signal yet after a minute
			l.onJobStartWarning()
		case <-l.job.deadline: // no job-signal within --job-start-timeout
			l.onJobStartTimeout()
		case err := <-l.stop.quitAnswered: // the --quit-url request ended
			l.onQuitAnswered(err)
		case <-l.stop.slow: // the sidecar takes a while to exit: say "stopping"
			l.onStopSlow()
		case <-l.stop.poll: // the sidecar exited: is the rest of its processes gone?
			l.onStopPoll()
		}
	}
	return l.result
}

// exited is the end of the command while it runs; nil otherwise.
func (l *loop) exited() <-chan struct{} {
	if l.life.runs != runsCommand {
		return nil
	}
	return l.sidecar.child.Done()
}

// orphanReaped fires when an orphan was reaped, while a daemon adopted
// from the command is the sidecar; nil otherwise.
func (l *loop) orphanReaped() <-chan struct{} {
	if l.life.runs != runsDaemon {
		return nil
	}
	return proc.OrphanReaped()
}

// to moves the state on by e (state.go's next); the caller does what the
// change asks for. An event the state does not allow is a bug of the
// loop: logged, and the state kept.
func (l *loop) to(e event) {
	next, err := l.life.next(e)
	if err != nil {
		l.log.Error("sidecar-watch bug: an event its state does not allow", "err", err)
		return
	}
	l.life = next
}

// write records the sidecar's state as the loop's life says it.
func (l *loop) write() error {
	l.state.Phase = l.life.recorded
	l.state.Updated = time.Now()
	err := l.dir.WriteSidecar(l.state)
	if err != nil {
		l.log.Error("cannot record the sidecar's state", "phase", l.state.Phase, "err", err)
	}
	return err
}

// logOnce logs msg the first time it is seen.
func (l *loop) logOnce(level slog.Level, msg string, args ...any) {
	if l.logged[msg] {
		return
	}
	l.logged[msg] = true
	l.log.Log(context.Background(), level, msg, args...)
}

// finishStopped ends sidecar-watch with exit code 0 after the sidecar is
// gone (or never started).
func (l *loop) finishStopped(why string) {
	l.to(evStopped)
	l.state.ChildPID = 0
	l.state.Terminating = l.life.terminating
	l.write()
	summary := fmt.Sprintf("sidecar-watch: %s stopped (%s)", l.cfg.Name, why)
	if l.state.ExitCode >= 0 {
		summary += fmt.Sprintf("; the sidecar's last exit code was %d", l.state.ExitCode)
	}
	l.log.Info("sidecar-watch done", "why", why, "ranFor", time.Since(l.begun).Round(time.Millisecond))
	cli.TerminationLog(l.cfg.TermLog, summary, l.log)
	l.result = nil
}

// finishFailed ends sidecar-watch with end, a *cli.ExitError carrying its
// exit code, recording the sidecar as failed so job-signal and other
// sidecars waiting for it give up at once.
func (l *loop) finishFailed(end error) {
	l.to(evFailed)
	l.state.ChildPID = 0
	l.state.LastError = end.Error()
	l.write()
	cli.TerminationLog(l.cfg.TermLog, fmt.Sprintf("sidecar-watch: %s failed: %v", l.cfg.Name, end), l.log)
	l.result = end
}
