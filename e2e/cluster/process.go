package cluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/job-signal/job-signal/internal/procfs"
	"github.com/job-signal/job-signal/internal/testing/procinfo"
)

// daemon is a background process the suite started (containerd, kubelet),
// logging to a file, stopped by its PID.
type daemon struct {
	name   string
	cmd    *exec.Cmd
	log    string
	exited chan struct{} // closed when the process has been waited for
	err    error         // its exit status, once exited is closed
}

// startDaemon starts argv with its output in logPath and moves it into the
// suite's daemons cgroup before it can start anything of its own.
func startDaemon(p paths, name, logPath string, argv ...string) (*daemon, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the child has its own copy
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// Its own process group: a Ctrl-C in the terminal reaches the test
		// binary, which then stops the daemons in order, not all at once.
		Setpgid: true,
	}
	if !p.keep {
		// If the test binary dies (a -timeout panic), do not leave it running.
		cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	d := &daemon{name: name, cmd: cmd, log: logPath, exited: make(chan struct{})}
	go func() {
		d.err = cmd.Wait()
		close(d.exited)
	}()
	if err := joinCgroup(p.cgroups+"/daemons", cmd.Process.Pid); err != nil {
		d.stop(5 * time.Second)
		return nil, err
	}
	return d, nil
}

// running says whether the daemon is still up, and if not, why.
func (d *daemon) running() error {
	select {
	case <-d.exited:
		return fmt.Errorf("%s exited (%v); see %s:\n%s", d.name, d.err, d.log, tailFile(d.log, 30))
	default:
		return nil
	}
}

// stop sends SIGTERM to the daemon's PID, and SIGKILL if it has not exited
// after grace. Only that PID: what it started is dealt with separately.
func (d *daemon) stop(grace time.Duration) error {
	if d == nil || d.running() != nil {
		return nil
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
		return nil
	case <-time.After(grace):
	}
	_ = d.cmd.Process.Kill()
	select {
	case <-d.exited:
		return fmt.Errorf("%s did not stop within %v of SIGTERM; killed", d.name, grace)
	case <-time.After(10 * time.Second):
		return fmt.Errorf("%s (pid %d) survived SIGKILL", d.name, d.cmd.Process.Pid)
	}
}

// process is a running process, for the leftover check.
type process struct {
	pid     int
	cmdline string
}

func (p process) String() string { return fmt.Sprintf("pid %d: %s", p.pid, p.cmdline) }

// ourProcesses lists every process that belongs to the suite: in its
// cgroup, or recognised by paths.ours (its daemons and containerd's shims,
// even outside the cgroup). Never the test binary itself.
func ourProcesses(p paths) ([]process, error) {
	inCgroup, err := cgroupPids(p.cgroups)
	if err != nil {
		return nil, err
	}
	all, err := procfs.All()
	if err != nil {
		return nil, err
	}
	lines := map[int]string{} // the processes found, by PID
	for _, pid := range all {
		if line, _ := commandLine(pid); p.ours(line) {
			lines[pid] = line
		}
	}
	for _, pid := range inCgroup {
		if _, found := lines[pid]; !found {
			if line, exists := commandLine(pid); exists { // zombies too
				lines[pid] = line
			}
		}
	}
	delete(lines, os.Getpid())
	var out []process
	for pid, line := range lines {
		out = append(out, process{pid, line})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].pid < out[j].pid })
	return out, nil
}

// killOurProcesses SIGKILLs every process of the suite and waits until
// none is left, or returns the survivors at the deadline.
func killOurProcesses(p paths, deadline time.Time) ([]process, error) {
	for {
		procs, err := ourProcesses(p)
		if err != nil || len(procs) == 0 {
			return nil, err
		}
		if time.Now().After(deadline) {
			return procs, fmt.Errorf("%d processes survived SIGKILL", len(procs))
		}
		for _, proc := range procs {
			_ = syscall.Kill(proc.pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// commandLine is pid's arguments joined by spaces (empty for a zombie),
// and whether the process exists.
func commandLine(pid int) (string, bool) {
	args, err := procinfo.Cmdline(pid)
	return strings.Join(args, " "), err == nil
}

// tailFile returns the last n lines of a file, for error messages.
func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// run runs a command to completion within timeout and returns its
// combined output; the error carries that output.
func run(timeout time.Duration, env []string, argv ...string) (string, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 5 * time.Second
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	timer := time.AfterFunc(timeout, func() { _ = cmd.Process.Kill() })
	err := cmd.Wait()
	if !timer.Stop() {
		err = fmt.Errorf("timed out after %v", timeout)
	}
	if err != nil {
		return out.String(), fmt.Errorf("%s: %w\n%s", strings.Join(argv, " "), err, out.String())
	}
	return out.String(), nil
}

var errDeadline = errors.New("deadline passed")

// poll calls check every interval until it returns done or an error, or
// timeout passes; then it returns errDeadline wrapped with the last reason.
func poll(timeout, interval time.Duration, check func() (done bool, reason string, err error)) error {
	deadline := time.Now().Add(timeout)
	for {
		done, reason, err := check()
		if err != nil || done {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w after %v: %s", errDeadline, timeout, reason)
		}
		time.Sleep(interval)
	}
}
