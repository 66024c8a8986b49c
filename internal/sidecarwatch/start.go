package sidecarwatch

import (
	"time"

	"github.com/job-signal/job-signal/internal/cli"
	"github.com/job-signal/job-signal/internal/proc"
	"github.com/job-signal/job-signal/signalfs"
)

// The way in: the directory, the wait before the command starts (the
// first scan, then the --after sidecars), and each start of the command.

// attach opens the directory, takes this sidecar's lock, reports the state
// and starts watching.
func (l *loop) attach() error {
	dir, err := signalfs.Open(l.cfg.Dir, true)
	if err != nil {
		return cli.Exit(cli.ExitFailure, cli.DirError(l.cfg.Dir, err))
	}
	lock, err := dir.LockSidecar(l.cfg.Name)
	if err != nil {
		dir.Close()
		return cli.Failf("--name %s, --dir %s: %w", l.cfg.Name, l.cfg.Dir, err)
	}
	l.dir, l.lock = dir, lock
	l.state.Liveness = lock.Liveness()
	if err := l.write(); err != nil {
		return cli.Exit(cli.ExitFailure, cli.DirError(l.cfg.Dir, err))
	}
	l.w = dir.Watch(signalfs.WatchOptions{Files: l.interest(), Poll: l.cfg.Poll, PollInterval: l.cfg.PollInterval, Logger: l.log})
	return nil
}

// interest is the files whose changes matter: the job's, and those of the
// sidecars this one is ordered against. Changes of other sidecars' files
// wake nobody.
func (l *loop) interest() []string {
	// job.lock too: its creation is the only event from a job-signal
	// killed before it wrote job.state.
	files := []string{signalfs.JobStateFile, signalfs.JobLockFile}
	for _, name := range append(append([]string{}, l.cfg.after...), l.cfg.stopAfter...) {
		files = append(files, signalfs.SidecarStateFile(name))
	}
	return files
}

// reattach carries on in a directory that replaced ours (--dir, a
// subdirectory, was removed and maybe made again): what we wrote is gone
// with the old one, so nobody could see us any more.
func (l *loop) reattach() error {
	l.log.Warn("the directory was replaced (removed, maybe made again); reporting in the directory now at its path", "dir", l.cfg.Dir)
	l.w.Close()
	l.lock.Release()
	l.dir.Close()
	l.job.lockFree = nil // it watched the directory that is gone
	return l.attach()
}

// reviewBeforeStart decides, while waiting, whether to start, wait on,
// give up or fail.
func (l *loop) reviewBeforeStart() {
	if d := l.observeJob(); d.stop {
		l.finishStopped(d.why + " before the sidecar started")
		return
	}
	if len(l.cfg.after) == 0 {
		l.startSidecar()
		return
	}
	d := decideAfter(l.cfg.Name, l.cfg.after, l.cfg.Dir, l.dir.Sidecar)
	switch {
	case d.err != nil:
		l.finishFailed(cli.Exit(cli.ExitFailure, d.err))
	case d.stop != "":
		l.to(evTerminating)
		l.finishStopped(d.stop + " before the sidecar started")
	case d.start:
		l.log.Info("sidecars ready; starting", "after", l.cfg.after, "waited", time.Since(l.begun).Round(time.Millisecond))
		l.startSidecar()
	default:
		l.pending = d.pending
	}
}

// startSidecar starts the sidecar's command (the first time, or again
// after a back-off); a command that cannot be started fails sidecar-watch
// with 126/127.
func (l *loop) startSidecar() {
	l.deadline = nil // --after-timeout, or the back-off
	if err := l.sidecar.start(l.state.Restarts); err != nil {
		code, ok := proc.ExitCode(err)
		if !ok {
			code = cli.ExitFailure
		}
		l.finishFailed(cli.Exit(code, err))
		return
	}
	l.state.ChildPID = l.sidecar.child.PID()
	l.to(evStart)
	if l.cfg.probe == nil {
		l.ready()
		return
	}
	l.write()
}

// ready logs, then announces: whoever waits on the state (the job's gate,
// an --after dependant) acts at once, and its logs must not come before
// this one.
func (l *loop) ready() {
	l.sidecar.cancelProbe()
	how := "started (no readiness check)"
	if l.cfg.probe != nil {
		how = l.cfg.probe.String() + " passed"
	}
	l.log.Info("sidecar ready", "how", how, "took", time.Since(l.sidecar.started).Round(time.Millisecond))
	l.to(evReady)
	l.state.LastError = ""
	l.write()
}
