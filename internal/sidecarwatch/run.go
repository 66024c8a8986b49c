package sidecarwatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"syscall"
	"time"

	"github.com/job-signal/job-signal/internal/cli"
	"github.com/job-signal/job-signal/internal/probe"
	"github.com/job-signal/job-signal/internal/proc"
	"github.com/job-signal/job-signal/signalfs"
)

// watch is one sidecar-watch run. All its fields are owned by the goroutine
// that calls run; the probe goroutine and the directory watcher talk to it
// through channels only.
type watch struct {
	cfg     *Cmd
	log     *slog.Logger
	dir     *signalfs.Dir
	w       *signalfs.Watcher
	signals chan os.Signal
	state   signalfs.SidecarState
	begun   time.Time

	child        *proc.Child
	childStarted time.Time
	probeFailed  chan error // readiness failures of the current child
	probePassed  chan error // the current child's probe loop result
	probeCancel  context.CancelFunc
	lastProbeLog time.Time
	restartAt    <-chan time.Time
	backoff      time.Duration

	// terminating: we got TERM, INT or QUIT, the Pod is going away; the
	// sidecar keeps serving until the job is done or termDeadline.
	terminating  bool
	termDeadline <-chan time.Time
	// lockFree fires when job.lock is released; non-nil while waiting.
	lockFree <-chan error
	// Until job-signal has written job.state: a warning after a minute,
	// and --job-start-timeout. Both are stopped once it has.
	jobStartWarn, jobStartDeadline *time.Timer
	// logged remembers messages already logged, so a state seen on every
	// event is reported once.
	logged map[string]bool
}

// jobStartWarning is how long sidecar-watch waits for job-signal's first
// state before it says that something may be wrong.
const jobStartWarning = time.Minute

// timerC is t's channel, or nil (never ready) for no timer.
func timerC(t *time.Timer) <-chan time.Time {
	if t == nil {
		return nil
	}
	return t.C
}

// errTerminated ends a wait because the Pod is terminating.
var errTerminated = errors.New("pod terminating")

// Run is sidecar-watch's main path.
func (c *Cmd) Run(env *cli.Env) error {
	signals, stop := env.CaughtSignals(proc.ForwardedSignals())
	defer stop()
	proc.SetUpReaping(c.Subreaper, env.Log)

	dir, err := signalfs.Open(c.Dir, true)
	if err != nil {
		return cli.Failf("--dir %s: %w", c.Dir, err)
	}
	// Held for life: readers learn from its release that this
	// sidecar-watch died (an OOM kill of its container) without a word.
	lock, err := dir.LockSidecar(context.Background(), c.Name, 5*time.Second)
	if err != nil {
		return cli.Failf("--name %s, --dir %s: %w", c.Name, c.Dir, err)
	}
	defer lock.Release()
	s := &watch{cfg: c, log: env.Log, dir: dir, signals: signals, begun: time.Now(), backoff: c.RestartBackoff, logged: map[string]bool{}}
	s.state = signalfs.SidecarState{Name: c.Name, Phase: signalfs.SidecarStarting, PID: os.Getpid(),
		Liveness: signalfs.LivenessFlock, After: c.after, StopAfter: c.stopAfter, ExitCode: -1}
	if !lock.Honoured {
		s.state.Liveness = signalfs.LivenessNone
	}
	if len(c.after) > 0 {
		s.state.Phase = signalfs.SidecarWaiting
	}
	if err := s.write(); err != nil {
		return cli.Failf("--dir %s is not usable: %w (it must be writable by uid %d)", c.Dir, err, os.Getuid())
	}
	// Ordering needs the other sidecars' files too (for cycle checks);
	// otherwise only the job's state matters.
	var files []string
	if len(c.after) == 0 && len(c.stopAfter) == 0 {
		// job.lock too: its creation is the only event from a job-signal
		// killed before it wrote job.state.
		files = []string{signalfs.JobStateFile, signalfs.JobLockFile}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s.w, err = dir.Watch(ctx, signalfs.WatchOptions{Files: files, Poll: c.Poll, PollInterval: c.PollInterval, Logger: s.log})
	if err != nil {
		return cli.Failf("watch --dir %s: %w", c.Dir, err)
	}
	defer s.w.Close()
	s.log.Info("sidecar-watch starting", "dir", c.Dir, "watch", s.w.Mode(), "after", c.after, "stop_after", c.stopAfter)
	s.jobStartWarn = time.NewTimer(jobStartWarning)
	if c.JobStartTimeout > 0 {
		s.jobStartDeadline = time.NewTimer(c.JobStartTimeout)
	}
	err = s.run()
	s.cancelProbe()
	return err
}

func (s *watch) run() error {
	if len(s.cfg.after) > 0 {
		switch err := s.waitAfter(); {
		case errors.Is(err, errJobDone), errors.Is(err, errTerminated):
			return s.stopped(err.Error() + " before the sidecar started")
		case err != nil:
			return s.fail(cli.ExitFailure, err)
		}
	} else {
		// The watcher's first notice: the scan after the watch was set.
		<-s.w.C
		if stop, why := s.jobSaysStop(); stop {
			return s.stopped(why + " before the sidecar started")
		}
	}
	if err := s.start(); err != nil {
		return err
	}
	return s.loop()
}

// loop supervises the running sidecar until it is time to stop.
func (s *watch) loop() error {
	for {
		var childDone <-chan struct{}
		if s.child != nil {
			childDone = s.child.Done()
		}
		select {
		case <-s.w.C:
			if stop, why := s.jobSaysStop(); stop {
				return s.stop(why)
			}
		case err := <-s.lockFree:
			s.lockFree = nil
			if err != nil {
				s.logOnce("lock-wait", "cannot wait on the job's lock", "err", err)
			}
			if stop, why := s.jobSaysStop(); stop {
				return s.stop(why)
			}
		case err := <-s.probeFailed:
			s.recordProbeFailure(err)
		case err := <-s.probePassed:
			s.probePassed = nil
			if err == nil {
				s.ready()
			}
		case <-childDone:
			if done, err := s.childExited(); done {
				return err
			}
		case <-s.restartAt:
			s.restartAt = nil
			if err := s.start(); err != nil {
				return err
			}
		case sig := <-s.signals:
			if s.onSignal(sig.(syscall.Signal)) {
				if stop, why := s.jobSaysStop(); stop {
					return s.stop(why)
				}
			}
		case <-s.termDeadline:
			return s.stop(fmt.Sprintf("Pod terminating and the job not done within --grace %s", s.cfg.Grace))
		case <-timerC(s.jobStartWarn):
			s.jobStartWarn = nil
			s.log.Warn("no job-signal has written its state yet: is the main container run by job-signal, with the same --dir?",
				"dir", s.cfg.Dir, "waited", jobStartWarning, "job_start_timeout", s.cfg.JobStartTimeout)
		case <-timerC(s.jobStartDeadline):
			s.jobStartDeadline = nil
			err := fmt.Errorf("--job-start-timeout %s: no job-signal wrote %s/job.state; is the main container run by job-signal, with the same --dir?", s.cfg.JobStartTimeout, s.cfg.Dir)
			s.log.Error("giving up on the job", "err", err)
			s.cancelProbe()
			s.endChild()
			return s.fail(cli.ExitFailure, err)
		}
	}
}

// onSignal handles a signal sent to sidecar-watch; it reports whether it
// began Pod termination.
func (s *watch) onSignal(sig syscall.Signal) bool {
	if proc.IsTermination(sig) {
		if s.terminating {
			return false
		}
		s.terminating = true
		s.termDeadline = time.After(s.cfg.Grace)
		// No restarts while the Pod goes away.
		s.restartAt = nil
		s.log.Info("Pod terminating: the sidecar keeps serving until the job is done", "signal", proc.SignalName(sig), "at_most", s.cfg.Grace)
		return true
	}
	if s.child == nil {
		s.log.Info("signal not forwarded: the sidecar is not running", "signal", proc.SignalName(sig))
		return false
	}
	if err := s.child.Signal(sig); err != nil {
		s.log.Warn("could not forward signal", "signal", proc.SignalName(sig), "err", err)
	} else {
		s.log.Info("forwarded signal", "signal", proc.SignalName(sig), "pid", s.child.PID())
	}
	return false
}

// start runs COMMAND and, when there is a readiness check, starts it.
func (s *watch) start() error {
	child, err := proc.Start(cli.Command(s.cfg.Command), proc.Options{Foreground: proc.OwnsTerminal()})
	if err != nil {
		code := cli.ExitFailure
		var execErr *proc.ExecError
		if errors.As(err, &execErr) {
			code = execErr.Code
		}
		return s.fail(code, err)
	}
	s.child, s.childStarted = child, time.Now()
	s.state.ChildPID = child.PID()
	s.log.Info("sidecar started", "pid", child.PID(), "command", cli.Command(s.cfg.Command), "restarts", s.state.Restarts)
	if s.cfg.probe == nil {
		s.ready()
		return nil
	}
	s.state.Phase = signalfs.SidecarStarting
	s.write()
	ctx, cancel := context.WithCancel(context.Background())
	s.probeCancel = cancel
	s.probeFailed = make(chan error, 1)
	s.probePassed = make(chan error, 1)
	go func(p probe.Probe, failed chan<- error, passed chan<- error) {
		passed <- probe.Loop(ctx, p, s.cfg.ReadyInterval, s.cfg.ProbeTimeout, failed)
	}(s.cfg.probe, s.probeFailed, s.probePassed)
	return nil
}

func (s *watch) cancelProbe() {
	if s.probeCancel != nil {
		s.probeCancel()
		s.probeCancel = nil
	}
	s.probeFailed, s.probePassed = nil, nil
}

func (s *watch) ready() {
	s.cancelProbe()
	s.state.Phase = signalfs.SidecarReady
	s.state.LastError = ""
	s.write()
	how := "started (no readiness check)"
	if s.cfg.probe != nil {
		how = s.cfg.probe.String() + " passed"
	}
	s.log.Info("sidecar ready", "how", how, "after", time.Since(s.childStarted).Round(time.Millisecond))
}

// recordProbeFailure keeps the latest readiness failure in the state file,
// at most once a second, so job-signal's ready-timeout error can say why.
func (s *watch) recordProbeFailure(err error) {
	msg := err.Error()
	if msg == s.state.LastError || time.Since(s.lastProbeLog) < time.Second {
		return
	}
	s.lastProbeLog = time.Now()
	s.state.LastError = msg
	s.write()
	s.log.Debug("sidecar not ready yet", "check", s.cfg.probe.String(), "err", msg)
}

// childExited handles the sidecar ending by itself. done is true when
// sidecar-watch is finished and err is its result.
func (s *watch) childExited() (done bool, err error) {
	status := s.child.Status()
	ran := time.Since(s.childStarted)
	pgid := s.child.PID()
	s.child = nil
	s.cancelProbe()
	s.state.ChildPID = 0
	s.state.ExitCode = status.ExitCode()
	s.state.LastError = "sidecar " + status.String()
	// What it started must not outlive it, nor run twice after a restart.
	killGroup(pgid)
	if stop, why := s.jobSaysStop(); stop {
		return true, s.stop(why)
	}
	if s.terminating {
		return true, s.stopped("the sidecar exited while the Pod is terminating: " + status.String())
	}
	if s.cfg.Restart == "Never" {
		s.log.Warn("sidecar ended by itself before the job was done; not restarting (--restart Never)", "status", status.String(), "ran", ran.Round(time.Millisecond))
		if status.ExitCode() == 0 {
			return true, s.stopped("the sidecar exited with code 0 by itself (--restart Never)")
		}
		return true, s.fail(status.ExitCode(), fmt.Errorf("sidecar %s by itself before the job was done (--restart Never)", status))
	}
	if ran >= s.cfg.RestartBackoffMax {
		s.backoff = s.cfg.RestartBackoff // it ran well: start the back-off over
	}
	delay := s.backoff
	s.backoff = min(2*s.backoff, s.cfg.RestartBackoffMax)
	s.state.Restarts++
	s.state.Phase = signalfs.SidecarRestarting
	s.write()
	s.log.Warn("sidecar ended by itself before the job was done; restarting", "status", status.String(), "ran", ran.Round(time.Millisecond), "in", delay, "restarts", s.state.Restarts)
	s.restartAt = time.After(delay)
	return false, nil
}

// jobSaysStop reads the job's state and decides whether the sidecar should
// stop now, and why.
func (s *watch) jobSaysStop() (bool, string) {
	job, found, err := s.readJob()
	if err != nil {
		return false, ""
	}
	if !found {
		return s.jobDiedBeforeState()
	}
	if job.Phase != signalfs.JobDone && job.Liveness == signalfs.LivenessFlock {
		if alive, ok := s.jobSignalAlive(); !ok || alive {
			return false, ""
		}
		// The lock is free. job-signal writes done before it lets go, so
		// read again: it may have finished since the first read.
		if job, found, err = s.readJob(); err != nil || !found {
			return false, ""
		}
		if job.Phase != signalfs.JobDone {
			return s.jobLost(job)
		}
	}
	if job.Phase != signalfs.JobDone {
		return false, ""
	}
	code := fmt.Sprintf("attempt %d %s with exit code %d", job.Attempt, job.Reason, job.ExitCode)
	if job.Final() {
		return true, "job done: " + code
	}
	if s.terminating {
		return true, "job done and Pod terminating: " + code
	}
	s.logOnce(fmt.Sprintf("failed:%d", job.Attempt), "job attempt failed; staying up for the next attempt (restartPolicy OnFailure)", "attempt", job.Attempt, "exit_code", job.ExitCode)
	return false, ""
}

// jobSignalAlive checks job.lock without blocking; ok is false when it
// cannot. While job-signal holds it, a waiter is started, so that its
// release (job-signal's death included) wakes the loop.
func (s *watch) jobSignalAlive() (alive, ok bool) {
	held, err := s.dir.JobLockHeld()
	if err != nil {
		s.logOnce("lock:"+err.Error(), "cannot check the job's lock", "err", err)
		return false, false
	}
	if held && s.lockFree == nil {
		s.lockFree = s.dir.WaitJobLockFree()
	}
	return held, true
}

// jobDiedBeforeState handles a directory with job.lock but no job.state:
// job-signal is between the two, or died there (an OOM kill in its first
// milliseconds). job.lock is created already locked, so a free one means
// the latter.
func (s *watch) jobDiedBeforeState() (bool, string) {
	if !s.dir.JobLockExists() {
		return false, "" // no job-signal has started yet
	}
	if alive, ok := s.jobSignalAlive(); !ok || alive {
		return false, ""
	}
	if _, found, err := s.readJob(); err != nil || found {
		return false, "" // written meanwhile: the next event handles it
	}
	return s.jobLost(signalfs.JobState{RestartPolicy: s.dir.JobLockRestartPolicy()})
}

// jobLost decides what a job-signal that died without writing done (its
// lock is free, its state not done: SIGKILL, an OOM kill of its container)
// means for the sidecar.
func (s *watch) jobLost(job signalfs.JobState) (bool, string) {
	why := fmt.Sprintf("job-signal (attempt %d) died without writing done: killed or OOM-killed", job.Attempt)
	if job.Attempt == 0 {
		why = "job-signal died before writing its state: killed or OOM-killed"
	}
	if job.RestartPolicy != signalfs.RestartOnFailure || s.terminating {
		return true, why
	}
	s.logOnce(fmt.Sprintf("lost:%d:%s", job.Attempt, job.Updated), why+"; staying up for the next attempt (restartPolicy OnFailure)")
	return false, ""
}

// readJob reads job.state, logging (once per distinct error) why it cannot.
func (s *watch) readJob() (signalfs.JobState, bool, error) {
	job, found, err := s.dir.ReadJob()
	switch {
	case errors.Is(err, os.ErrPermission):
		s.logOnceAt(slog.LevelError, "job-read:"+err.Error(), "cannot read the job's state: the containers must run as the same user or share a group (the Pod's fsGroup)", "err", err)
	case err != nil:
		s.logOnce("job-read:"+err.Error(), "cannot read the job's state; waiting for a valid one", "err", err)
	case found && s.jobStartWarn != nil:
		s.jobStartWarn.Stop()
		s.jobStartWarn = nil
		if s.jobStartDeadline != nil {
			s.jobStartDeadline.Stop()
			s.jobStartDeadline = nil
		}
	}
	return job, found, err
}

func (s *watch) write() error {
	s.state.Updated = time.Now()
	err := s.dir.WriteSidecar(s.state)
	if err != nil {
		s.log.Error("cannot record the sidecar's state", "phase", s.state.Phase, "err", err)
	}
	return err
}

func (s *watch) logOnce(key, msg string, args ...any) {
	s.logOnceAt(slog.LevelWarn, key, msg, args...)
}

func (s *watch) logOnceAt(level slog.Level, key, msg string, args ...any) {
	if s.logged[key] {
		return
	}
	s.logged[key] = true
	s.log.Log(context.Background(), level, msg, args...)
}

// stopped ends sidecar-watch with exit code 0 after the sidecar is gone
// (or never started).
func (s *watch) stopped(why string) error {
	s.state.Phase = signalfs.SidecarStopped
	s.state.ChildPID = 0
	s.state.Terminating = s.terminating
	s.write()
	summary := fmt.Sprintf("sidecar-watch: %s stopped (%s)", s.cfg.Name, why)
	if s.state.ExitCode >= 0 {
		summary += fmt.Sprintf("; the sidecar's last exit code was %d", s.state.ExitCode)
	}
	s.log.Info("sidecar-watch done", "why", why, "after", time.Since(s.begun).Round(time.Millisecond))
	cli.TerminationLog(s.cfg.TermLog, summary, s.log)
	return nil
}

// fail ends sidecar-watch with code, recording the sidecar as failed so
// job-signal and other sidecars waiting for it give up at once.
func (s *watch) fail(code int, err error) error {
	s.state.Phase = signalfs.SidecarFailed
	s.state.ChildPID = 0
	s.state.LastError = err.Error()
	s.write()
	cli.TerminationLog(s.cfg.TermLog, fmt.Sprintf("sidecar-watch: %s failed: %v", s.cfg.Name, err), s.log)
	return cli.Exit(code, err)
}
