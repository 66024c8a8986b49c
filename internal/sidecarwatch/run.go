package sidecarwatch

import (
	"errors"
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

// watch is one sidecar-watch run. Its fields are owned by the goroutine
// that calls Run; the probe goroutine, the lock waiters and the directory
// watcher talk to it through channels only.
type watch struct {
	cfg     *Cmd
	log     *slog.Logger
	signals chan os.Signal
	begun   time.Time

	dir   *signalfs.Dir
	lock  *signalfs.Lock // held for life: its release tells the others we died
	w     *signalfs.Watcher
	state signalfs.SidecarState // what we report in sidecar-NAME.state

	job     *jobWatch // the job's state, its lock waiter, the job-start timers
	sidecar *sidecar  // the sidecar's command

	// terminating: we got TERM, INT or QUIT, the Pod is going away; the
	// sidecar keeps serving until the job is done or termDeadline.
	terminating  bool
	termDeadline <-chan time.Time

	// logged remembers messages already logged, so a state seen on every
	// event is reported once.
	logged map[string]bool
}

// Run is sidecar-watch's main path.
func (c *Cmd) Run(env *cli.Env) error {
	signals, stop := env.CaughtSignals(proc.ForwardedSignals())
	defer stop()
	proc.SetUpReaping(c.Subreaper, env.Log)
	s := &watch{cfg: c, log: env.Log, signals: signals, begun: time.Now(), logged: map[string]bool{}}
	s.state = signalfs.SidecarState{Name: c.Name, Phase: signalfs.SidecarStarting, PID: os.Getpid(),
		Version: version.String(), After: c.after, StopAfter: c.stopAfter, ExitCode: -1}
	if len(c.after) > 0 {
		s.state.Phase = signalfs.SidecarWaiting
	}
	if err := s.attach(); err != nil {
		return err
	}
	defer func() { s.w.Close(); s.lock.Release(); s.dir.Close() }()
	s.sidecar = newSidecar(c, s.log)
	s.job = newJobWatch(c)
	defer s.job.close()
	s.log.Info("sidecar-watch starting", "dir", c.Dir, "watch", s.w.Mode(), "after", c.after, "stopAfter", c.stopAfter)
	err := s.run()
	s.sidecar.cancelProbe()
	return err
}

// attach opens the directory, takes this sidecar's lock, reports the state
// and starts watching.
func (s *watch) attach() error {
	dir, err := signalfs.Open(s.cfg.Dir, true)
	if err != nil {
		return cli.Exit(cli.ExitFailure, cli.DirError(s.cfg.Dir, err))
	}
	lock, err := dir.LockSidecar(s.cfg.Name)
	if err != nil {
		dir.Close()
		return cli.Failf("--name %s, --dir %s: %w", s.cfg.Name, s.cfg.Dir, err)
	}
	s.dir, s.lock = dir, lock
	s.state.Liveness = lock.Liveness()
	if err := s.write(); err != nil {
		return cli.Exit(cli.ExitFailure, cli.DirError(s.cfg.Dir, err))
	}
	s.w = dir.Watch(signalfs.WatchOptions{Files: s.interest(), Poll: s.cfg.Poll, PollInterval: s.cfg.PollInterval, Logger: s.log})
	return nil
}

// interest is the files whose changes matter: the job's, and those of the
// sidecars this one is ordered against. Changes of other sidecars' files
// wake nobody.
func (s *watch) interest() []string {
	// job.lock too: its creation is the only event from a job-signal
	// killed before it wrote job.state.
	files := []string{signalfs.JobStateFile, signalfs.JobLockFile}
	for _, name := range append(append([]string{}, s.cfg.after...), s.cfg.stopAfter...) {
		files = append(files, signalfs.SidecarStateFile(name))
	}
	return files
}

// reattach carries on in a directory that replaced ours (--dir, a
// subdirectory, was removed and maybe made again): what we wrote is gone
// with the old one, so nobody could see us any more.
func (s *watch) reattach() error {
	s.log.Warn("the directory was replaced (removed, maybe made again); reporting in the directory now at its path", "dir", s.cfg.Dir)
	s.w.Close()
	s.lock.Release()
	s.dir.Close()
	s.job.reset()
	return s.attach()
}

func (s *watch) run() error {
	if len(s.cfg.after) > 0 {
		if err := s.waitAfter(); err != nil {
			var early errStopBeforeStart
			if errors.As(err, &early) {
				return s.stopped(early.why + " before the sidecar started")
			}
			return s.fail(cli.ExitFailure, err)
		}
	} else {
		// The watcher's first notice: the scan after the watch was set.
		<-s.w.C
		if d := s.observeJob(); d.stop {
			return s.stopped(d.why + " before the sidecar started")
		}
	}
	if err := s.startSidecar(); err != nil {
		return err
	}
	return s.loop()
}

// loop supervises the running sidecar until it is time to stop.
func (s *watch) loop() error {
	for {
		select {
		case <-s.w.C:
		case <-s.w.Replaced:
			if err := s.reattach(); err != nil {
				return s.fail(cli.ExitFailure, err)
			}
		case err := <-s.job.lockFree:
			s.job.lockFree = nil
			if err != nil {
				s.logOnce(slog.LevelWarn, "cannot wait on the job's lock", "err", err)
			}
		case err := <-s.sidecar.probeFailed:
			s.recordProbeFailure(err)
			continue
		case err := <-s.sidecar.probePassed:
			s.sidecar.probePassed = nil
			if err == nil {
				s.ready()
			}
			continue
		case <-s.sidecar.exited():
			if done, err := s.sidecarExited(); done {
				return err
			}
		case <-s.sidecar.restartAt:
			s.sidecar.restartAt = nil
			if err := s.startSidecar(); err != nil {
				return err
			}
			continue
		case sig := <-s.signals:
			if stop, why := s.onSignal(sig.(syscall.Signal)); stop {
				return s.stop(why)
			}
		case <-s.termDeadline:
			return s.stop(fmt.Sprintf("Pod terminating and the job not done within --grace %s", s.cfg.Grace))
		case <-s.job.warn:
			s.job.warned()
			s.log.Warn("no job-signal has shown itself yet: is the main container run by job-signal, with the same --dir?",
				"dir", s.cfg.Dir, "waited", jobStartWarning, "jobStartTimeout", s.cfg.JobStartTimeout)
			continue
		case <-s.job.deadline:
			err := fmt.Errorf("--job-start-timeout %s: no job-signal showed itself in %s; is the main container run by job-signal, with the same --dir?", s.cfg.JobStartTimeout, s.cfg.Dir)
			s.log.Error("giving up on the job", "err", err)
			s.sidecar.cancelProbe()
			s.endSidecar(err.Error())
			return s.fail(cli.ExitFailure, err)
		}
		if d := s.observeJob(); d.stop {
			return s.stop(d.why)
		}
	}
}

// observeJob reads the job's view and decides; see jobWatch.observe.
func (s *watch) observeJob() decision {
	d := s.job.observe(s.dir, s.terminating)
	if d.note != "" {
		s.logOnce(slog.LevelWarn, d.note)
	}
	return d
}

// onSignal handles a signal sent to sidecar-watch. It says whether to stop
// now, and why.
func (s *watch) onSignal(sig syscall.Signal) (stop bool, why string) {
	if proc.IsTermination(sig) {
		if s.terminating {
			if sig == syscall.SIGINT {
				// A second Ctrl-C at a terminal: stop now, as people expect.
				return true, "a second INT while the Pod is terminating"
			}
			return false, ""
		}
		s.terminating = true
		s.termDeadline = time.After(s.cfg.Grace)
		// No restarts while the Pod goes away.
		s.sidecar.restartAt = nil
		s.log.Info("Pod terminating: the sidecar keeps serving until the job is done (a second INT stops it now)", "signal", proc.SignalName(sig), "atMost", s.cfg.Grace)
		return false, ""
	}
	s.sidecar.forward(sig)
	return false, ""
}

// startSidecar starts the sidecar's command; a command that cannot be
// started fails sidecar-watch with 126/127.
func (s *watch) startSidecar() error {
	if err := s.sidecar.start(s.state.Restarts); err != nil {
		code, ok := proc.ExitCode(err)
		if !ok {
			code = cli.ExitFailure
		}
		return s.fail(code, err)
	}
	s.state.ChildPID = s.sidecar.child.PID()
	if s.cfg.probe == nil {
		s.ready()
		return nil
	}
	s.state.Phase = signalfs.SidecarStarting
	s.write()
	return nil
}

// ready logs, then announces: whoever waits on the state (the job's gate,
// an --after dependant) acts at once, and its logs must not come before
// this one.
func (s *watch) ready() {
	s.sidecar.logReady()
	s.state.Phase = signalfs.SidecarReady
	s.state.LastError = ""
	s.write()
}

// recordProbeFailure keeps the latest readiness failure in the state file,
// at most once a second, so job-signal's gate can say why it waits.
func (s *watch) recordProbeFailure(err error) {
	if !s.sidecar.probeFailureWorthRecording(err, s.state.LastError) {
		return
	}
	s.state.LastError = err.Error()
	s.write()
}

// sidecarExited handles the sidecar ending by itself. done is true when
// sidecar-watch is finished and err is its result.
func (s *watch) sidecarExited() (done bool, err error) {
	status := s.sidecar.reap()
	s.state.ChildPID = 0
	s.state.ExitCode = status.ExitCode()
	s.state.LastError = "sidecar " + status.String()
	if d := s.observeJob(); d.stop {
		return true, s.stop(d.why)
	}
	if s.terminating {
		return true, s.stopped("the sidecar exited while the Pod is terminating: " + status.String())
	}
	if s.cfg.Restart == "Never" {
		s.log.Warn("sidecar ended by itself before the job was done; not restarting (--restart Never)", "status", status.String())
		if status.ExitCode() == 0 {
			return true, s.stopped("the sidecar exited with code 0 by itself (--restart Never)")
		}
		return true, s.fail(status.ExitCode(), fmt.Errorf("sidecar %s by itself before the job was done (--restart Never)", status))
	}
	s.state.Restarts++
	s.state.Phase = signalfs.SidecarRestarting
	s.write()
	s.sidecar.scheduleRestart(status, s.state.Restarts)
	return false, nil
}
