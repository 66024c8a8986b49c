package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/job-signal/job-signal/internal/procfs"
	"github.com/job-signal/job-signal/internal/testing/procinfo"
	"github.com/job-signal/job-signal/signalfs"
)

// waitLimit bounds every wait of the harness: a benchmark that hangs is a
// broken product, not a slow one.
const waitLimit = 30 * time.Second

// quiet are the flags that keep the measured programs' logs out of the way.
var quiet = []string{"--log-level", "error", "--termination-log", ""}

// process is one started program.
type process struct {
	cmd  *exec.Cmd
	done chan error
}

func start(name string, args ...string) (*process, error) {
	return startCmd(exec.Command(name, args...))
}

// startCmd starts cmd in a process group of its own, its stderr ours.
func startCmd(cmd *exec.Cmd) (*process, error) {
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	return p, nil
}

func (p *process) wait() error {
	select {
	case err := <-p.done:
		return err
	case <-time.After(waitLimit):
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		return fmt.Errorf("%s did not exit within %s", p.cmd.Path, waitLimit)
	}
}

// until polls check (every millisecond: the harness waits on other
// processes' files) until it is true, or fails after waitLimit.
func until(what string, check func() bool) error {
	deadline := time.Now().Add(waitLimit)
	for !check() {
		if time.Now().After(deadline) {
			return fmt.Errorf("gave up waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

func allReady(dir *signalfs.Dir, names []string) bool {
	for _, n := range names {
		s, found, err := dir.ReadSidecar(n)
		if err != nil || !found || s.Phase != signalfs.SidecarReady {
			return false
		}
	}
	return true
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func isExit(err error, code int) bool {
	var exit *exec.ExitError
	return errors.As(err, &exit) && exit.ExitCode() == code
}

type procStat struct {
	ticks, switches int
	rssKiB          int
}

// readProcStat sums utime+stime (/proc/PID/stat) and the context switches
// of every thread, and reads VmRSS.
func readProcStat(pid int) procStat {
	var ps procStat
	if st, err := procfs.ReadStat(pid); err == nil {
		ps.ticks = int(st.UTime + st.STime)
	}
	ps.switches = procinfo.ContextSwitches(pid)
	ps.rssKiB, _ = procinfo.StatusValue(pid, "VmRSS")
	return ps
}
