//go:build soak

package soak

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/job-signal/job-signal/internal/procfs"
	"github.com/job-signal/job-signal/internal/testing/procinfo"
)

// The wrappers: how they are started (command lines, environment) and how
// processes are killed.

// fakeMaxLife ends any fake a broken lifecycle would leave running.
const fakeMaxLife = "2m"

// binaries are the programs under test and the fake workload, built once.
type binaries struct {
	jobSignal, sidecarWatch, fake string
}

// wrapper is a job-signal or sidecar-watch process started by the soak.
type wrapper struct {
	label   string
	args    []string
	logPath string
	cmd     *exec.Cmd
	started time.Time
	done    chan struct{}
	exited  time.Time // when Wait returned: at or after the real exit
	// killedAtDeadline: the harness killed it because the lifecycle hung.
	killedAtDeadline bool
}

func (w *wrapper) exitedNow() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

// code is the exit code a shell or the kubelet would report: the code, or
// 128+N when signal N killed the process.
func (w *wrapper) code() int {
	if sig, ok := w.signal(); ok {
		return 128 + int(sig)
	}
	return w.cmd.ProcessState.ExitCode()
}

// signal is the signal that killed the process, if one did.
func (w *wrapper) signal() (syscall.Signal, bool) {
	ws, ok := w.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ok && ws.Signaled() {
		return ws.Signal(), true
	}
	return 0, false
}

// start runs a wrapper with its stdout and stderr (and those of its
// command, which inherits them) in a file. A file, not a pipe: a pipe
// would keep Wait waiting for a grandchild that holds it. Call with l.mu
// held.
func (l *lifecycle) start(label, bin string, args []string) (*wrapper, error) {
	w := &wrapper{label: label, args: append([]string{bin}, args...), logPath: l.path(label + ".log"), done: make(chan struct{})}
	out, err := os.Create(w.logPath)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	w.cmd = exec.Command(bin, args...)
	w.cmd.Stdout, w.cmd.Stderr = out, out
	w.cmd.Env = l.env()
	// If the soak itself dies, its wrappers must not run on.
	w.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := w.cmd.Start(); err != nil {
		return nil, err
	}
	w.started = time.Now()
	l.wrappers = append(l.wrappers, w)
	go func() {
		w.cmd.Wait()
		w.exited = time.Now()
		close(w.done)
	}()
	return w, nil
}

// env is the soak's environment without any setting of the programs under
// test, plus --dir through the environment when the scenario says so.
func (l *lifecycle) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "JOB_SIGNAL_") && !strings.HasPrefix(kv, "SIDECAR_WATCH_") {
			env = append(env, kv)
		}
	}
	if l.sc.DirFromEnv {
		env = append(env, "JOB_SIGNAL_DIR="+l.dir)
	}
	return env
}

func (l *lifecycle) dirArgs() []string {
	if l.sc.DirFromEnv {
		return nil
	}
	return []string{"--dir", l.dir}
}

// termLog is a termination-log file the wrapper writes its summary to:
// created empty, since the wrappers only write to one that exists.
func (l *lifecycle) termLog(name string) string {
	p := l.path("termination-log-" + name)
	os.WriteFile(p, nil, 0o644)
	return p
}

func (l *lifecycle) jobArgs(i int, a attempt) []string {
	name := jobName(i)
	args := append(l.dirArgs(), "--ready-timeout", "30s", "--restart-policy", l.sc.RestartPolicy,
		"--termination-log", l.termLog(name))
	if len(l.sc.WaitFor) > 0 {
		args = append(args, "--wait-for", strings.Join(l.sc.WaitFor, ","))
	}
	if a.Poll {
		args = append(args, "--poll", "--poll-interval", "50ms")
	}
	if a.Subreaper {
		args = append(args, "--subreaper")
	}
	args = append(args, "--", l.bins.fake, "-name", name, "-events", l.recPath(name), "-pids", l.path("pids"), "-max-life", fakeMaxLife)
	switch {
	case a.OOM:
		// Runs until the harness kills it.
	case l.sc.Kind == kindTermination || a.TermAlone && a.TermCode >= 0:
		args = append(args, "-stop-signal", "TERM", "-on-stop", "exit:"+strconv.Itoa(a.TermCode))
	case a.TermAlone:
		args = append(args, "-stop-signal", "TERM", "-on-stop", "die")
	case a.KillSelf != "":
		args = append(args, "-run", a.Run.String(), "-kill-self", a.KillSelf)
	default:
		args = append(args, "-run", a.Run.String(), "-exit", strconv.Itoa(a.Exit))
	}
	if a.Fill {
		args = append(args, "-fill", l.hog())
	}
	return args
}

// sidecarAddr is sidecar i's port for readiness (which 0) or quit (1).
func (l *lifecycle) sidecarAddr(i, which int) string {
	return fmt.Sprintf("%s:%d", l.addr, 20000+2*i+which)
}

func (l *lifecycle) sidecarArgs(i int, s *sidecar) []string {
	args := append([]string{"--name", s.Name}, l.dirArgs()...)
	onStop := s.OnStop
	if onStop == "exit" {
		onStop = "exit:" + strconv.Itoa(s.StopCode)
	}
	work := []string{l.bins.fake, "-name", s.Name, "-events", l.recPath(s.Name), "-pids", l.path("pids"), "-max-life", fakeMaxLife,
		"-counter", l.path("rec", s.Name+".count"), "-crash", strconv.Itoa(s.Crashes), "-crash-code", strconv.Itoa(s.CrashCode),
		"-ready-delay", s.ReadyDelay.String(), "-stop-signal", s.Signal, "-on-stop", onStop}
	switch s.Ready {
	case "file":
		f := l.path("ready-" + s.Name)
		args = append(args, "--ready-file", f)
		work = append(work, "-touch", f)
	case "tcp":
		args = append(args, "--ready-tcp", l.sidecarAddr(i, 0))
		work = append(work, "-listen", l.sidecarAddr(i, 0))
	}
	if len(s.After) > 0 {
		args = append(args, "--after", strings.Join(s.After, ","))
	}
	if len(s.StopAfter) > 0 {
		args = append(args, "--stop-after", strings.Join(s.StopAfter, ","))
	}
	if s.StopAfterTimeout > 0 {
		args = append(args, "--stop-after-timeout", s.StopAfterTimeout.String())
	}
	args = append(args, "--stop-signal", s.StopSignal, "--grace", s.Grace.String(),
		"--restart-backoff", "10ms", "--restart-backoff-max", "100ms", "--termination-log", l.termLog(s.Name))
	if s.Quit != "" {
		args = append(args, "--quit-url", "http://"+l.sidecarAddr(i, 1)+"/quit")
		work = append(work, "-http", l.sidecarAddr(i, 1), "-quit", s.Quit)
	}
	if s.Never {
		args = append(args, "--restart", "Never")
	}
	if s.Subreaper {
		args = append(args, "--subreaper")
	}
	if s.Poll {
		args = append(args, "--poll", "--poll-interval", "50ms")
	}
	if s.Grandchild {
		work = append(work, "-grandchild", l.path("rec", s.Name+".grandchild"))
	}
	return append(append(args, "--"), work...)
}

// killMatching SIGKILLs every process with needle in its command line and
// waits until each has ended.
func (l *lifecycle) killMatching(needle string) {
	for _, st := range procinfo.Matching(needle) {
		if err := killAndWait(st); err != nil {
			l.harnessFailure("kill pid %d: %v", st.PID, err)
		}
	}
}

// killAndWait SIGKILLs the process st describes through a pidfd, so that
// a reused PID is never hit, and waits (at most 5s) until it has ended.
func killAndWait(st procfs.Stat) error {
	fd, err := unix.PidfdOpen(st.PID, 0)
	if errors.Is(err, unix.ESRCH) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	// The pidfd now pins this PID: check it is still the same process.
	if !procfs.Running(st.PID, st.StartTime) {
		return nil
	}
	if err := unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0); err != nil && !errors.Is(err, unix.ESRCH) {
		return err
	}
	// A pidfd becomes readable when its process ends.
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 5000)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("still there 5s after SIGKILL: %s", procinfo.Describe(st.PID))
		}
		return nil
	}
}
