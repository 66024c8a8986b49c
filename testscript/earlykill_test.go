package testscript

import (
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestEarlyKill kills job-signal at random moments of its start-up, as an
// OOM kill of the main container might. A job-signal killed
// before it made any entry in the directory looks exactly like one that
// never ran (the sidecars wait, bounded by --job-start-timeout or the Job's
// activeDeadlineSeconds); one killed after must never strand the sidecars:
// its first entry is job.lock, already locked, and its release tells them.
func TestEarlyKill(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts 2 processes per round")
	}
	const rounds = 40
	var before, after int
	for i := range rounds {
		work := t.TempDir()
		dir := filepath.Join(work, "signal")
		if err := os.Mkdir(dir, 0o770); err != nil {
			t.Fatal(err)
		}
		fakePID := filepath.Join(work, "fake.pid")
		errFile := filepath.Join(work, "sidecar.err")
		sidecar, sidecarDone := background(t, nil, errFile, "sidecar-watch", "--dir", dir, "--name", "proxy", "--", "fake", "-pidfile", fakePID)
		sidecarLog := func() string { b, _ := os.ReadFile(errFile); return string(b) }
		t.Cleanup(func() { killPIDFile(fakePID) })
		waitFor(t, func() bool { return exists(filepath.Join(dir, "sidecar-proxy.state")) }, "sidecar state")

		job := exec.Command("job-signal", "--dir", dir, "--", "fake", "-exit", "0")
		job.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		delay := time.Duration(rand.Int64N(int64(30 * time.Millisecond)))
		if err := job.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(delay) // the fault injected: a kill at a random moment
		syscall.Kill(-job.Process.Pid, syscall.SIGKILL)
		job.Wait()

		entries := jobEntries(t, dir)
		switch {
		case len(entries) == 0:
			// Killed before its first entry: indistinguishable from a
			// job-signal that never started. The sidecar keeps waiting.
			before++
			killTree(sidecar.Process.Pid) // its fake too, which may not have written its PID yet
			<-sidecarDone
		case !exists(filepath.Join(dir, "job.lock")):
			t.Fatalf("round %d (kill after %s): entries %v but no job.lock: a job-signal killed now strands the sidecars", i, delay, entries)
		default:
			after++
			select {
			case err := <-sidecarDone:
				if err != nil {
					t.Fatalf("round %d (kill after %s): sidecar-watch: %v\n%s", i, delay, err, sidecarLog())
				}
			case <-time.After(waitLimit()):
				syscall.Kill(-sidecar.Process.Pid, syscall.SIGKILL)
				<-sidecarDone
				t.Fatalf("round %d (kill after %s): entries %v, yet the sidecar did not stop within %s\n%s", i, delay, entries, waitLimit(), sidecarLog())
			}
		}
	}
	t.Logf("%d rounds: %d killed before job-signal's first entry, %d after", rounds, before, after)
}

// jobEntries lists what job-signal may have made in dir: everything but the
// sidecar's own files.
func jobEntries(t *testing.T, dir string) []string {
	list, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range list {
		if !strings.Contains(e.Name(), "sidecar-") {
			names = append(names, e.Name())
		}
	}
	return names
}

// background starts a program in its own process group, with env (nil:
// this process's) and its stderr in errFile: a file, not a pipe, since the
// program's own children inherit it and Wait would wait for them too.
func background(t *testing.T, env []string, errFile, name string, args ...string) (*exec.Cmd, <-chan error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := os.Create(errFile)
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return cmd, done
}

// killPIDFile kills the process whose PID a fake wrote, if any.
func killPIDFile(path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		return
	}
	if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && pid > 1 {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, os.ErrNotExist)
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(waitLimit())
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", waitLimit(), what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
