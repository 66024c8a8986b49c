package testscript

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/job-signal/job-signal/internal/procfs"
	"github.com/job-signal/job-signal/internal/testing/procinfo"
)

// The script commands that start, signal and wait for processes, and
// the registry that ends whatever a script leaves running.

type (
	registryKey  struct{}
	setupVarsKey struct{}
)

// registry holds a script's background processes.
type registry struct {
	mu    sync.Mutex
	procs map[string]*started
}

type started struct {
	cmd  *exec.Cmd
	done chan struct{}
	code int
}

func procs(ts *testscript.TestScript) *registry {
	return ts.Value(registryKey{}).(*registry)
}

// killAll ends whatever a script left running, so a failed script leaks
// nothing.
func (r *registry) killAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.procs {
		select {
		case <-p.done: // reaped: its PID may be another process's now
		default:
			killTree(p.cmd.Process.Pid)
		}
		<-p.done
	}
}

// killTree SIGKILLs pid, every process below it and their process groups
// (the wrappers put their commands in groups of their own), and waits until
// they are gone. pid is stopped first, so that it starts nothing while its
// descendants are listed. pid must be an unreaped child of the test.
func killTree(pid int) {
	syscall.Kill(pid, syscall.SIGSTOP)
	var tree []procfs.Stat
	for _, p := range append(procfs.Descendants(pid), pid) {
		if st, err := procfs.ReadStat(p); err == nil {
			tree = append(tree, st)
		}
	}
	for _, st := range tree {
		syscall.Kill(-st.PID, syscall.SIGKILL)
		syscall.Kill(st.PID, syscall.SIGKILL)
	}
	deadline := time.Now().Add(waitLimit())
	for _, st := range tree {
		for procfs.Running(st.PID, st.StartTime) && time.Now().Before(deadline) {
			time.Sleep(2 * time.Millisecond)
		}
	}
}

func (r *registry) get(ts *testscript.TestScript, name string) *started {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.procs[name]
	if p == nil {
		ts.Fatalf("no process %q was started", name)
	}
	return p
}

func cmdStart(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: start NAME [KEY=VALUE...] PROG [ARG...]")
	}
	name := args[0]
	var extraEnv []string
	for len(args) > 2 && strings.Contains(args[1], "=") {
		extraEnv = append(extraEnv, args[1])
		args = append(args[:1], args[2:]...)
	}
	path, err := exec.LookPath(args[1])
	if !filepath.IsAbs(args[1]) {
		// Look up in the script's PATH, where the registered programs are.
		path, err = lookPathIn(args[1], ts.Getenv("PATH"))
	}
	ts.Check(err)
	out, err := os.Create(ts.MkAbs(name + ".out"))
	ts.Check(err)
	errf, err := os.Create(ts.MkAbs(name + ".err"))
	ts.Check(err)
	cmd := exec.Command(path, args[2:]...)
	cmd.Args[0] = args[1]
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = scriptEnv(ts, extraEnv)
	cmd.Stdout, cmd.Stderr = out, errf
	// Own process group: a signal to the script's process group does not
	// reach it, and cleanup can kill everything it started.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	ts.Check(cmd.Start())
	p := &started{cmd: cmd, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		out.Close()
		errf.Close()
		p.code = exitCodeOf(cmd.ProcessState)
		close(p.done)
	}()
	r := procs(ts)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.procs[name] != nil {
		ts.Fatalf("a process %q was started already", name)
	}
	r.procs[name] = p
}

func lookPathIn(name, pathList string) (string, error) {
	for _, dir := range filepath.SplitList(pathList) {
		candidate := filepath.Join(dir, name)
		if info, err := os.Stat(candidate); err == nil && info.Mode()&0o111 != 0 && !info.IsDir() {
			return candidate, nil
		}
	}
	return "", fmt.Errorf("%s: not found in the script's PATH", name)
}

// scriptEnv is the script's environment (as set up, with the script's
// changes to those variables) plus extra KEY=VALUE pairs.
func scriptEnv(ts *testscript.TestScript, extra []string) []string {
	var env []string
	for _, kv := range ts.Value(setupVarsKey{}).([]string) {
		k, _, _ := strings.Cut(kv, "=")
		env = append(env, k+"="+ts.Getenv(k))
	}
	return append(env, extra...)
}

func exitCodeOf(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

func cmdSignal(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: signal NAME SIG")
	}
	p := procs(ts).get(ts, args[0])
	sig, err := procinfo.ParseSignal(args[1], allSignals)
	ts.Check(err)
	ts.Check(p.cmd.Process.Signal(sig))
}

var allSignals = []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT,
	syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGKILL, syscall.SIGCHLD, syscall.SIGURG, syscall.SIGWINCH}

func cmdWaitExit(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitexit NAME CODE")
	}
	waitExit(ts, args[0], args[1], waitLimit())
}

func cmdWithin(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: within DURATION NAME CODE")
	}
	d, err := time.ParseDuration(args[0])
	ts.Check(err)
	waitExit(ts, args[1], args[2], d)
}

func waitExit(ts *testscript.TestScript, name, codeArg string, limit time.Duration) {
	want, err := strconv.Atoi(codeArg)
	ts.Check(err)
	p := procs(ts).get(ts, name)
	select {
	case <-p.done:
	case <-time.After(limit):
		ts.Fatalf("%s did not exit within %s", name, limit)
	}
	if p.code != want {
		ts.Fatalf("%s exited with code %d, want %d", name, p.code, want)
	}
}

func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode CODE PROG [ARG...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		got = exitCodeOf(exitErr.ProcessState)
	case err != nil:
		ts.Fatalf("run %s: %v", args[1], err)
	}
	if got != want {
		ts.Fatalf("%s exited with code %d, want %d", args[1], got, want)
	}
}
