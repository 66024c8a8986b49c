package sidecarwatch

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/job-signal/job-signal/internal/cli"
)

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
