package jobsignal

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/job-signal/job-signal/internal/cli"
	"github.com/job-signal/job-signal/internal/proc"
	"github.com/job-signal/job-signal/signalfs"
)

// notReady is a sidecar that has not passed the gate, and why.
type notReady struct {
	name string
	why  string
}

// readyGate waits until every sidecar in waitFor is ready. On a timeout, a
// sidecar that failed for good, or a stop signal, it writes the done marker
// (so the sidecars stop) and returns the error job-signal exits with;
// COMMAND never runs then.
func (r *runner) readyGate(waitFor []string) error {
	files := make([]string, len(waitFor))
	for i, name := range waitFor {
		files[i] = signalfs.SidecarStateFile(name)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := r.dir.Watch(ctx, signalfs.WatchOptions{Files: files, Poll: r.cfg.Poll, PollInterval: r.cfg.PollInterval, Logger: r.log})
	if err != nil {
		return r.finish(cli.ExitFailure, signalfs.ReasonError, "", fmt.Errorf("watch --dir %s: %w", r.cfg.Dir, err))
	}
	defer w.Close()

	var timeout <-chan time.Time
	if r.cfg.ReadyTimeout > 0 {
		timer := time.NewTimer(r.cfg.ReadyTimeout)
		defer timer.Stop()
		timeout = timer.C
	}
	r.log.Info("waiting for sidecars", "wait_for", waitFor, "timeout", r.cfg.ReadyTimeout, "watch", w.Mode())
	ready := map[string]bool{}
	var pending []notReady
	for {
		select {
		case <-w.C:
			var failed, terminated []notReady
			pending, failed, terminated = r.checkReady(waitFor, ready)
			if len(terminated) > 0 {
				// A sidecar-watch is only told to stop when the Pod is
				// deleted; our own signal is on its way. End as it would.
				r.terminating = true
				err := fmt.Errorf("the Pod is terminating (sidecar %s stopped) while waiting for sidecars; COMMAND was not started", list(terminated))
				return r.finish(128+int(syscall.SIGTERM), signalfs.ReasonInterrupted, "", err)
			}
			if len(failed) > 0 {
				err := fmt.Errorf("sidecar gone before COMMAND could start: %s; COMMAND was not started and %s", list(failed), r.sidecarsFate())
				return r.finish(cli.ExitFailure, signalfs.ReasonSidecarFailed, "", err)
			}
			if len(pending) == 0 {
				r.log.Info("all sidecars ready", "waited", time.Since(r.started).Round(time.Millisecond))
				return nil
			}
		case <-timeout:
			err := fmt.Errorf("--ready-timeout %s passed with sidecars not ready: %s; COMMAND was not started and %s", r.cfg.ReadyTimeout, list(pending), r.sidecarsFate())
			return r.finish(cli.ExitFailure, signalfs.ReasonReadyTimeout, "", err)
		case s := <-r.signals:
			sig := s.(syscall.Signal)
			if !proc.IsTermination(sig) {
				r.log.Info("ignoring signal: COMMAND has not started", "signal", proc.SignalName(sig))
				continue
			}
			r.terminating = true
			err := fmt.Errorf("received SIG%s while waiting for sidecars %s; COMMAND was not started", proc.SignalName(sig), list(pending))
			return r.finish(128+int(sig), signalfs.ReasonInterrupted, proc.SignalName(sig), err)
		}
	}
}

// sidecarsFate says what a failed gate means for the sidecars: under
// OnFailure the kubelet restarts the main container, which will need them.
func (r *runner) sidecarsFate() string {
	if r.cfg.RestartPolicy == signalfs.RestartOnFailure {
		return "the sidecars stay up for the next attempt (--restart-policy OnFailure)"
	}
	return "the sidecars were told to stop"
}

// checkReady reads the state of each sidecar in waitFor. It returns those
// not ready yet, those that failed for good, and those stopped because the
// Pod is terminating. ready records which were already reported, so each
// is logged once.
func (r *runner) checkReady(waitFor []string, ready map[string]bool) (pending, failed, terminated []notReady) {
	for _, name := range waitFor {
		s, found, err := r.dir.ReadSidecar(name)
		switch {
		case err != nil:
			pending = append(pending, notReady{name, err.Error()})
		case !found:
			pending = append(pending, notReady{name, fmt.Sprintf("no state yet: is a sidecar-watch running with --name %s and --dir %s?", name, r.cfg.Dir)})
		case !s.Phase.Gone() && !r.dir.SidecarAlive(s):
			pending = append(pending, notReady{name, phaseWhy(s) + ", but its sidecar-watch is not running (container died?)"})
		case s.Phase == signalfs.SidecarReady:
			if !ready[name] {
				ready[name] = true
				r.log.Info("sidecar ready", "name", name, "waited", time.Since(r.started).Round(time.Millisecond))
			}
		case s.Phase == signalfs.SidecarStopped && s.Terminating:
			terminated = append(terminated, notReady{name, phaseWhy(s)})
		case s.Phase.Gone():
			// Stopped or failed: it will never be ready (a sidecar-watch
			// that stopped its sidecar has exited).
			failed = append(failed, notReady{name, phaseWhy(s)})
		default:
			pending = append(pending, notReady{name, phaseWhy(s)})
		}
	}
	return pending, failed, terminated
}

func phaseWhy(s signalfs.SidecarState) string {
	if s.LastError != "" {
		return fmt.Sprintf("%s: %s", s.Phase, s.LastError)
	}
	return string(s.Phase)
}

func list(items []notReady) string {
	parts := make([]string, len(items))
	for i, it := range items {
		parts[i] = fmt.Sprintf("%s (%s)", it.name, it.why)
	}
	return strings.Join(parts, ", ")
}
