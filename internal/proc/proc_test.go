package proc

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const waitLimit = 20 * time.Second

func waitDone(t *testing.T, c *Child) Status {
	t.Helper()
	select {
	case <-c.Done():
		return c.Status()
	case <-time.After(waitLimit):
		c.SignalGroup(syscall.SIGKILL)
		t.Fatal("child did not end")
		return Status{}
	}
}

func TestExitCodes(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	for script, want := range map[string]int{"exit 0": 0, "exit 7": 7, "kill -KILL $$": 137, "kill -TERM $$": 143} {
		c, err := Start([]string{sh, "-c", script}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := waitDone(t, c).ExitCode(); got != want {
			t.Errorf("%q: exit code %d, want %d", script, got, want)
		}
	}
}

func TestExecErrors(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "script")
	os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644)
	badInterp := filepath.Join(dir, "bad")
	os.WriteFile(badInterp, []byte("#!/no/such/interpreter\n"), 0o755)
	for argv0, want := range map[string]int{
		"no-such-program-anywhere": ExitNotFound,
		filepath.Join(dir, "nope"): ExitNotFound,
		notExec:                    ExitNotExecutable,
		dir:                        ExitNotExecutable,
		badInterp:                  ExitNotFound,
		"":                         ExitNotFound,
	} {
		_, err := Start([]string{argv0}, Options{})
		var execErr *ExecError
		if !errors.As(err, &execErr) || execErr.Code != want {
			t.Errorf("%q: got %v, want exec error %d", argv0, err, want)
		}
	}
}

func TestSignalGroupReachesGrandchild(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	pidfile := filepath.Join(t.TempDir(), "pid")
	// The grandchild ignores nothing; the group signal must reach it.
	c, err := Start([]string{sh, "-c", "sleep 600 & echo $! > " + pidfile + "; wait"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(waitLimit)
	for {
		if data, err := os.ReadFile(pidfile); err == nil && strings.TrimSpace(string(data)) != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no grandchild pid")
		}
		time.Sleep(time.Millisecond)
	}
	if !GroupAlive(c.PID()) {
		t.Fatal("group not alive")
	}
	c.SignalGroup(syscall.SIGKILL)
	waitDone(t, c)
	for GroupAlive(c.PID()) {
		if time.Now().After(deadline) {
			t.Fatal("group still alive after SIGKILL")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestForwarded(t *testing.T) {
	for _, sig := range Forwarded {
		if sig == syscall.SIGURG || sig == syscall.SIGCHLD {
			t.Errorf("%v must never be forwarded", sig)
		}
	}
}
