package proc

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// Exit codes for failures to run a command, as shells and tini use them.
const (
	ExitNotExecutable = 126
	ExitNotFound      = 127
)

// Status is how a child ended.
type Status struct {
	// Code is the exit code when the child exited normally.
	Code int
	// Signal is the signal that killed the child, or 0.
	Signal syscall.Signal
}

// ExitCode maps the status to a shell-style exit code: the child's own code,
// or 128+N when signal N killed it.
func (s Status) ExitCode() int {
	if s.Signal != 0 {
		return 128 + int(s.Signal)
	}
	return s.Code
}

func (s Status) String() string {
	if s.Signal != 0 {
		return fmt.Sprintf("killed by signal %s (exit code %d)", SignalName(s.Signal), s.ExitCode())
	}
	return fmt.Sprintf("exited with code %d", s.Code)
}

func statusOf(ws syscall.WaitStatus) Status {
	if ws.Signaled() {
		return Status{Signal: ws.Signal()}
	}
	return Status{Code: ws.ExitStatus()}
}

// SignalName is a signal's short name without the SIG prefix ("TERM").
func SignalName(sig syscall.Signal) string {
	name := unix.SignalName(sig)
	if name == "" {
		return fmt.Sprintf("%d", int(sig))
	}
	return name[3:]
}
