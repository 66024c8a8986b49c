package scripttest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/job-signal/job-signal/internal/proc"
)

// commands are the script commands added to testscript's own:
//
//	start NAME [K=V...] PROG [ARG...]
//	                           start PROG in the background (own process
//	                           group, extra environment K=V); its output goes
//	                           to $WORK/NAME.out and $WORK/NAME.err
//	signal NAME SIG            send SIG (TERM, KILL, ...) to NAME
//	waitexit NAME CODE         wait for NAME to exit, then check its exit
//	                           code (128+N when killed by signal N)
//	exitcode CODE PROG [ARG...] run PROG in the foreground and check its exit
//	                           code; stdout and stderr work as after exec
//	waitfile PATH              wait until PATH exists
//	waitmatch PATH REGEXP      wait until PATH's content matches REGEXP
//	waitgone PIDFILE           wait until the process in PIDFILE is gone
//	                           (a zombie counts as gone)
//	alive PIDFILE              the process in PIDFILE is running
//	freeport VAR               set VAR to a free TCP port on 127.0.0.1
//	touch PATH                 create an empty file
//	killpid PIDFILE SIG        send SIG to the process in PIDFILE
//	within DURATION NAME CODE  like waitexit, but NAME must exit within
//	                           DURATION of the command being run
//
// Every wait gives up after waitLimit.
var commands = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	"start":     cmdStart,
	"signal":    cmdSignal,
	"waitexit":  cmdWaitExit,
	"within":    cmdWithin,
	"exitcode":  cmdExitCode,
	"waitfile":  cmdWaitFile,
	"waitmatch": cmdWaitMatch,
	"waitgone":  cmdWaitGone,
	"alive":     cmdAlive,
	"freeport":  cmdFreePort,
	"touch":     cmdTouch,
	"killpid":   cmdKillPID,
}

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
// nothing: every descendant's process group (the wrappers put their
// commands in groups of their own), then the started processes' groups.
func (r *registry) killAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.procs {
		for _, pid := range descendants(p.cmd.Process.Pid) {
			syscall.Kill(-pid, syscall.SIGKILL)
			syscall.Kill(pid, syscall.SIGKILL)
		}
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// descendants lists the processes below pid, from /proc.
func descendants(pid int) []int {
	children := map[int][]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(s[i+1:])
		self, _ := strconv.Atoi(strings.Fields(s)[0])
		if len(fields) > 1 {
			parent, _ := strconv.Atoi(fields[1])
			children[parent] = append(children[parent], self)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		for _, c := range children[next] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
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
	sig, err := proc.ParseSignal(args[1], allSignals)
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

// poll calls check until it returns true or the wait limit passes. The
// interval is short: waits are on other processes' files, and polling them
// keeps the harness simple and the tests free of fixed sleeps.
func poll(ts *testscript.TestScript, what string, check func() bool, explain ...func() string) {
	deadline := time.Now().Add(waitLimit())
	for !check() {
		if time.Now().After(deadline) {
			for _, e := range explain {
				ts.Logf("%s", e())
			}
			ts.Fatalf("gave up after %s waiting for %s", waitLimit(), what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile PATH")
	}
	path := ts.MkAbs(args[0])
	poll(ts, path, func() bool {
		_, err := os.Lstat(path)
		return err == nil
	})
}

func cmdWaitMatch(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitmatch PATH REGEXP")
	}
	path := ts.MkAbs(args[0])
	re, err := regexp.Compile("(?m)" + args[1])
	ts.Check(err)
	var data []byte
	poll(ts, fmt.Sprintf("%s to match %q", path, args[1]), func() bool {
		var err error
		data, err = os.ReadFile(path)
		if err == nil && re.Match(data) {
			return true
		}
		return false
	}, func() string { return fmt.Sprintf("%s holds:\n%s", args[0], data) })
}

func readPID(ts *testscript.TestScript, pidfile string) int {
	data, err := os.ReadFile(ts.MkAbs(pidfile))
	ts.Check(err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	ts.Check(err)
	return pid
}

// running reports whether pid is a live process (not a zombie).
func running(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

func cmdWaitGone(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitgone PIDFILE")
	}
	pid := readPID(ts, args[0])
	poll(ts, fmt.Sprintf("process %d (%s) to end", pid, args[0]), func() bool { return !running(pid) })
}

func cmdAlive(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: alive PIDFILE")
	}
	pid := readPID(ts, args[0])
	if running(pid) == neg {
		ts.Fatalf("process %d (%s): running=%v", pid, args[0], !neg)
	}
}

func cmdFreePort(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: freeport VAR")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ts.Setenv(args[0], strconv.Itoa(port))
}

// condition adds [root] and [unshare] (a new PID namespace can be made).
func condition(cond string) (bool, error) {
	switch cond {
	case "root":
		return os.Getuid() == 0, nil
	case "unshare":
		if os.Getuid() != 0 {
			return false, nil
		}
		_, err := exec.LookPath("unshare")
		return err == nil, nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

func cmdTouch(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: touch PATH")
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), nil, 0o644))
}

func cmdKillPID(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: killpid PIDFILE SIG")
	}
	sig, err := proc.ParseSignal(args[1], allSignals)
	ts.Check(err)
	ts.Check(syscall.Kill(readPID(ts, args[0]), sig))
}
