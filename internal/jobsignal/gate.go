package jobsignal

import (
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/job-signal/job-signal/internal/cli"
	"github.com/job-signal/job-signal/internal/proc"
	"github.com/job-signal/job-signal/signalfs"
)

// verdict sorts the sidecars the gate waits for by what they mean for it.
type verdict struct {
	pending    []signalfs.SidecarView // not ready yet, may still be
	failed     []signalfs.SidecarView // stopped or failed for good: will never be ready
	terminated []signalfs.SidecarView // stopped because the Pod is terminating
}

// judge is the gate's decision over the classified sidecars.
func judge(views []signalfs.SidecarView) verdict {
	var v verdict
	for _, s := range views {
		switch {
		case s.Ready():
		case s.Condition == signalfs.SidecarIsStopped && s.State.Terminating:
			v.terminated = append(v.terminated, s)
		case s.NeverReady():
			v.failed = append(v.failed, s)
		default:
			v.pending = append(v.pending, s)
		}
	}
	return v
}

// readyGate waits until every sidecar in waitFor is ready. On a timeout, a
// sidecar that failed for good, or a stop signal, it writes the done marker
// and returns the error job-signal exits with; COMMAND never runs then.
func (r *runner) readyGate(waitFor []string) error {
	// Any sidecar's state: a name in --wait-for with no state may be a typo
	// of one that reports.
	w := r.dir.Watch(signalfs.WatchOptions{Poll: r.cfg.Poll, PollInterval: r.cfg.PollInterval, Logger: r.log})
	defer func() { w.Close() }()
	timeout := cli.After(r.cfg.ReadyTimeout)
	progress := time.NewTicker(r.cfg.ProgressInterval)
	defer progress.Stop()
	r.log.Info("waiting for sidecars", "waitFor", waitFor, "readyTimeout", r.cfg.ReadyTimeout, "watch", w.Mode())
	ready := map[string]bool{}
	var v verdict
	var said string // the last progress said at debug level
	for {
		select {
		case <-w.C:
			views := make([]signalfs.SidecarView, len(waitFor))
			for i, name := range waitFor {
				views[i] = r.dir.Sidecar(name)
				if views[i].Ready() && !ready[name] {
					ready[name] = true
					r.log.Info("sidecar ready", "name", name, "waited", time.Since(r.started).Round(time.Millisecond))
				}
			}
			v = judge(views)
			if len(v.terminated) > 0 {
				// A sidecar-watch is only told to stop when the Pod is
				// deleted; our own signal is on its way. End as it would.
				r.terminating = true
				err := fmt.Errorf("the Pod is terminating (sidecar %s) while waiting for sidecars; COMMAND was not started", r.list(v.terminated))
				return r.finish(128+int(syscall.SIGTERM), signalfs.ReasonInterrupted, "", err)
			}
			if len(v.failed) > 0 {
				err := fmt.Errorf("sidecar gone before COMMAND could start: %s; COMMAND was not started and %s", r.list(v.failed), r.sidecarsFate(v.failed))
				return r.finish(cli.ExitFailure, signalfs.ReasonSidecarFailed, "", err)
			}
			if len(v.pending) == 0 {
				r.log.Info("all sidecars ready", "waited", time.Since(r.started).Round(time.Millisecond))
				return nil
			}
			if now := r.list(v.pending); now != said {
				said = now
				r.log.Debug("still waiting for sidecars", "pending", now)
			}
		case <-progress.C:
			r.log.Info("still waiting for sidecars", "pending", r.list(v.pending), "waited", time.Since(r.started).Round(time.Second), "readyTimeout", r.cfg.ReadyTimeout)
		case <-w.Replaced:
			// Our state went with the old directory: record it in the new
			// one (write carries on there), and watch that.
			if err := r.write(); err != nil {
				return r.finish(cli.ExitFailure, signalfs.ReasonError, "", err)
			}
			w.Close()
			w = r.dir.Watch(signalfs.WatchOptions{Poll: r.cfg.Poll, PollInterval: r.cfg.PollInterval, Logger: r.log})
		case <-timeout:
			err := fmt.Errorf("--ready-timeout %s passed with sidecars not ready: %s; COMMAND was not started and %s", r.cfg.ReadyTimeout, r.list(v.pending), r.sidecarsFate(nil))
			return r.finish(cli.ExitFailure, signalfs.ReasonReadyTimeout, "", err)
		case s := <-r.signals:
			sig := s.(syscall.Signal)
			if !proc.IsTermination(sig) {
				r.log.Info("ignoring signal: COMMAND has not started", "signal", proc.SignalName(sig))
				continue
			}
			r.terminating = true
			err := fmt.Errorf("received SIG%s while waiting for sidecars %s; COMMAND was not started", proc.SignalName(sig), r.list(v.pending))
			return r.finish(128+int(sig), signalfs.ReasonInterrupted, proc.SignalName(sig), err)
		}
	}
}

// sidecarsFate says what a failed gate means for the sidecars: under
// OnFailure the kubelet restarts the main container, which will need them,
// so they stay up; those gone stay gone unless their containers restart.
func (r *runner) sidecarsFate(gone []signalfs.SidecarView) string {
	if r.cfg.RestartPolicy != signalfs.RestartOnFailure {
		return "the sidecars were told to stop"
	}
	if len(gone) == 0 {
		return "the sidecars stay up for the next attempt (--restart-policy OnFailure)"
	}
	names := make([]string, len(gone))
	for i, s := range gone {
		names[i] = s.Name
	}
	return fmt.Sprintf("the other sidecars stay up for the next attempt (--restart-policy OnFailure), which will fail the same way unless %s comes back", strings.Join(names, ", "))
}

// list names each sidecar with why it is not ready; a name that has no
// state while a near one reports is probably a typo, and is said so.
func (r *runner) list(views []signalfs.SidecarView) string {
	var reporting []string
	parts := make([]string, len(views))
	for i, s := range views {
		parts[i] = fmt.Sprintf("%s (%s)", s.Name, s.Why(r.cfg.Dir))
		if s.Condition != signalfs.SidecarMissing {
			continue
		}
		if reporting == nil {
			reporting, _ = r.dir.SidecarNames()
		}
		if near, ok := cli.Nearest(s.Name, reporting); ok {
			parts[i] = fmt.Sprintf("%s: no such sidecar; %q is reporting, did you mean it?", s.Name, near)
		}
	}
	return strings.Join(parts, ", ")
}
