//go:build soak

package soak

import (
	"context"
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

	"golang.org/x/sys/unix"

	"github.com/job-signal/job-signal/soak/procfs"
)

// lifecycleDeadline bounds one lifecycle: a hang is a failure.
const lifecycleDeadline = 60 * time.Second

// binaries are the programs under test and the workload, built once.
type binaries struct {
	jobSignal, sidecarWatch, workload string
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

// lifecycle runs one scenario: a job (one or two attempts) and its sidecars,
// each in a directory of its own.
type lifecycle struct {
	sc    *scenario
	bins  binaries
	root  string // everything of this lifecycle is under root
	dir   string // the shared --dir
	addr  string // a loopback address for this lifecycle's ports alone
	begun time.Time
	ctx   context.Context

	mu         sync.Mutex // guards what follows
	wrappers   []*wrapper
	sidecars   map[string]*wrapper
	jobs       []*wrapper
	terminated bool
	termAt     time.Time
	killAt     map[int]time.Time // attempt index -> when the harness SIGKILLed it
	notStarted []string
	hung       []string // what was still running at the deadline
	harness    []string // the harness's own failures (could not start a process...)

	jobDone chan struct{} // closed once the last attempt has ended
}

func newLifecycle(sc *scenario, bins binaries, root string) *lifecycle {
	n := sc.Index + 1
	return &lifecycle{
		sc: sc, bins: bins, root: root, dir: filepath.Join(root, "signal"),
		// 127.0.0.0/8 is all loopback on Linux: a private address per
		// lifecycle means its fixed ports can never collide with another's.
		addr:     fmt.Sprintf("127.%d.%d.%d", 10+n/62500, n/250%250, 1+n%250),
		sidecars: map[string]*wrapper{},
		killAt:   map[int]time.Time{},
		jobDone:  make(chan struct{}),
	}
}

func (l *lifecycle) path(parts ...string) string {
	return filepath.Join(append([]string{l.root}, parts...)...)
}

func (l *lifecycle) recPath(name string) string { return l.path("rec", name+".log") }

func jobName(i int) string { return fmt.Sprintf("job-%d", i+1) }

func (l *lifecycle) harnessFailure(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.harness = append(l.harness, fmt.Sprintf(format, args...))
}

// run plays the scenario to its end, or to the deadline.
func (l *lifecycle) run() error {
	if err := os.MkdirAll(l.path("rec"), 0o755); err != nil {
		return err
	}
	if l.sc.PreCreateDir {
		if err := os.Mkdir(l.dir, 0o755); err != nil {
			return err
		}
	}
	var cancel context.CancelFunc
	l.begun = time.Now()
	l.ctx, cancel = context.WithDeadline(context.Background(), l.begun.Add(lifecycleDeadline))
	defer cancel()

	var starters sync.WaitGroup
	for i, s := range l.sc.Sidecars {
		starters.Add(1)
		go func() {
			defer starters.Done()
			l.startSidecarWhenDue(i, s)
		}()
	}
	for i, a := range l.sc.Attempts {
		if !l.runAttempt(i, a) {
			break
		}
	}
	close(l.jobDone)
	starters.Wait()
	l.waitAll()
	return nil
}

// sleep waits d, a delay that is part of the scenario; false if the
// lifecycle's deadline came first.
func (l *lifecycle) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-l.ctx.Done():
		return false
	}
}

func (l *lifecycle) waitExit(w *wrapper) bool {
	select {
	case <-w.done:
		return true
	case <-l.ctx.Done():
		return false
	}
}

// runAttempt runs job-signal once and, for the fault kinds, injects the
// fault. It returns false if the lifecycle should not go on.
func (l *lifecycle) runAttempt(i int, a attempt) bool {
	if !l.sleep(a.Delay) {
		return false
	}
	l.mu.Lock()
	w, err := l.start(jobName(i), l.bins.jobSignal, l.jobArgs(i, a))
	if err == nil {
		l.jobs = append(l.jobs, w)
	}
	l.mu.Unlock()
	if err != nil {
		l.harnessFailure("start %s: %v", jobName(i), err)
		return false
	}
	switch {
	case a.OOM:
		l.oomKill(i, a, w)
	case l.sc.Kind == kindTermination:
		l.terminateWhenDue(i, w)
	}
	return l.waitExit(w)
}

// commandStarted waits until attempt i's COMMAND has recorded its start
// (it catches its stop signal from then on). False if job-signal ended
// first, or the deadline came.
func (l *lifecycle) commandStarted(i int, w *wrapper) bool {
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		if hasEvent(l.recPath(jobName(i)), "start") {
			return true
		}
		select {
		case <-tick.C:
		case <-w.done:
			return hasEvent(l.recPath(jobName(i)), "start")
		case <-l.ctx.Done():
			return false
		}
	}
}

// oomKill does what the kernel does to a container out of memory since
// Kubernetes 1.28 on cgroup v2: SIGKILL to every process of the main side.
// job-signal goes first, so the sidecars can only learn it from job.lock.
func (l *lifecycle) oomKill(i int, a attempt, w *wrapper) {
	if !a.OOMEarly && !l.commandStarted(i, w) {
		return // job-signal ended on its own; the exit code check says more
	}
	if !l.sleep(a.OOMAfter) {
		return
	}
	l.mu.Lock()
	l.killAt[i] = time.Now()
	l.mu.Unlock()
	w.cmd.Process.Kill()
	if !l.waitExit(w) {
		return
	}
	// job-signal is reaped, so it starts nothing more: kill all it left.
	l.killMatching(l.recPath(jobName(i)))
}

// killMatching SIGKILLs every process with needle in its command line and
// waits until each has ended.
func (l *lifecycle) killMatching(needle string) {
	for _, st := range procfs.Matching(needle) {
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
			return fmt.Errorf("still there 5s after SIGKILL: %s", procfs.Describe(st.PID))
		}
		return nil
	}
}

// terminateWhenDue deletes the Pod at the scenario's moment.
func (l *lifecycle) terminateWhenDue(i int, w *wrapper) {
	if !l.sc.TermEarly {
		// If job-signal ended before COMMAND started, the Pod is
		// deleted all the same.
		l.commandStarted(i, w)
	}
	if !l.sleep(l.sc.TermAfter) {
		return
	}
	l.terminate()
}

// terminate is the kubelet deleting the Pod: SIGTERM to every container's
// main process (the wrappers) at once, and no container starts any more.
func (l *lifecycle) terminate() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.terminated = true
	l.termAt = time.Now()
	for _, w := range l.wrappers {
		// os.Process signals through a pidfd: never a reused PID.
		w.cmd.Process.Signal(syscall.SIGTERM)
	}
}

// startSidecarWhenDue starts sidecar i after its delay, or, if it is late,
// once the job has ended.
func (l *lifecycle) startSidecarWhenDue(i int, s *sidecar) {
	if s.Late {
		select {
		case <-l.jobDone:
		case <-l.ctx.Done():
		}
	} else {
		l.sleep(s.StartDelay)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.terminated || l.ctx.Err() != nil {
		l.notStarted = append(l.notStarted, s.Name)
		return
	}
	w, err := l.start("sidecar-"+s.Name, l.bins.sidecarWatch, l.sidecarArgs(i, s))
	if err != nil {
		l.harness = append(l.harness, fmt.Sprintf("start sidecar %s: %v", s.Name, err))
		return
	}
	l.sidecars[s.Name] = w
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
	args = append(args, "--", l.bins.workload, "-name", name, "-rec", l.recPath(name), "-pids", l.path("pids"))
	switch {
	case a.OOM:
		// Runs until the harness kills it.
	case l.sc.Kind == kindTermination:
		args = append(args, "-stop-signal", "TERM", "-on-stop", "exit", "-stop-code", strconv.Itoa(a.TermCode))
	case a.KillSelf != "":
		args = append(args, "-run", a.Run.String(), "-kill-self", a.KillSelf)
	default:
		args = append(args, "-run", a.Run.String(), "-exit", strconv.Itoa(a.Exit))
	}
	return args
}

// sidecarAddr is sidecar i's port for readiness (which 0) or quit (1).
func (l *lifecycle) sidecarAddr(i, which int) string {
	return fmt.Sprintf("%s:%d", l.addr, 20000+2*i+which)
}

func (l *lifecycle) sidecarArgs(i int, s *sidecar) []string {
	args := append([]string{"--name", s.Name}, l.dirArgs()...)
	work := []string{l.bins.workload, "-name", s.Name, "-rec", l.recPath(s.Name), "-pids", l.path("pids"),
		"-counter", l.path("rec", s.Name+".count"), "-crash", strconv.Itoa(s.Crashes), "-crash-code", strconv.Itoa(s.CrashCode),
		"-ready-delay", s.ReadyDelay.String(), "-stop-signal", s.Signal, "-on-stop", s.OnStop, "-stop-code", strconv.Itoa(s.StopCode)}
	switch s.Ready {
	case "file":
		f := l.path("ready-" + s.Name)
		args = append(args, "--ready-file", f)
		work = append(work, "-ready-file", f)
	case "tcp":
		args = append(args, "--ready-tcp", l.sidecarAddr(i, 0))
		work = append(work, "-ready-tcp", l.sidecarAddr(i, 0))
	}
	if len(s.After) > 0 {
		args = append(args, "--after", strings.Join(s.After, ","))
	}
	if len(s.StopAfter) > 0 {
		args = append(args, "--stop-after", strings.Join(s.StopAfter, ","))
	}
	args = append(args, "--stop-signal", s.StopSignal, "--grace", s.Grace.String(),
		"--restart-backoff", "10ms", "--restart-backoff-max", "100ms", "--termination-log", l.termLog(s.Name))
	if s.Quit != "" {
		args = append(args, "--quit-url", "http://"+l.sidecarAddr(i, 1)+"/quit")
		work = append(work, "-quit", l.sidecarAddr(i, 1), "-quit-mode", s.Quit)
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
		work = append(work, "-grandchild")
	}
	return append(append(args, "--"), work...)
}

// waitAll waits until every wrapper has exited. At the deadline it records
// what still runs, for the report, and kills everything of the lifecycle.
func (l *lifecycle) waitAll() {
	l.mu.Lock()
	wrappers := append([]*wrapper(nil), l.wrappers...)
	l.mu.Unlock()
	for _, w := range wrappers {
		if l.waitExit(w) {
			continue
		}
		l.mu.Lock()
		listed := map[int]bool{}
		for _, w := range l.wrappers {
			if !w.exitedNow() {
				w.killedAtDeadline = true
				listed[w.cmd.Process.Pid] = true
				l.hung = append(l.hung, fmt.Sprintf("%s (%s)", w.label, procfs.Describe(w.cmd.Process.Pid)))
			}
		}
		for _, st := range procfs.Matching(l.root) {
			if !listed[st.PID] {
				l.hung = append(l.hung, procfs.Describe(st.PID))
			}
		}
		l.mu.Unlock()
		for _, w := range wrappers {
			w.cmd.Process.Kill()
		}
		for _, w := range wrappers {
			<-w.done
		}
		l.killMatching(l.root)
		return
	}
}

// hasEvent reports whether a record file holds an event of this kind.
func hasEvent(path, kind string) bool {
	events, _ := readEvents(path)
	for _, e := range events {
		if e.kind == kind {
			return true
		}
	}
	return false
}
