package sidecarwatch

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/job-signal/job-signal/internal/cli"
	"github.com/job-signal/job-signal/signalfs"
)

func (s *watch) write() error {
	s.state.Updated = time.Now()
	err := s.dir.WriteSidecar(s.state)
	if err != nil {
		s.log.Error("cannot record the sidecar's state", "phase", s.state.Phase, "err", err)
	}
	return err
}

// logOnce logs msg the first time it is seen.
func (s *watch) logOnce(level slog.Level, msg string, args ...any) {
	if s.logged[msg] {
		return
	}
	s.logged[msg] = true
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
	s.log.Info("sidecar-watch done", "why", why, "ranFor", time.Since(s.begun).Round(time.Millisecond))
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
