// Package proc runs a command as a proper parent: in its own process group,
// with its exit status mapped to shell-style exit codes, signals forwarded,
// and, when the wrapper is PID 1 or a child subreaper, orphaned zombies
// reaped without stealing the child's own status.
package proc

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// ExecError is a failure to start the command; Code is 127 when it was not
// found and 126 when it could not be executed.
type ExecError struct {
	Path string
	Code int
	Err  error
}

func (e *ExecError) Error() string {
	if e.Code == ExitNotFound {
		return fmt.Sprintf("command not found: %s: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("command cannot be executed: %s: %v", e.Path, e.Err)
}

func (e *ExecError) Unwrap() error { return e.Err }

// Options says how to start a command. Its standard files and
// environment are this process's own, so the child writes straight to the
// container's log without a copy in between.
type Options struct {
	// Foreground makes the child's process group the foreground group of
	// the terminal on stdin (see OwnsTerminal).
	Foreground bool
	// Output, when set, receives the child's stdout and stderr, and its
	// stdin is /dev/null (a readiness command, not the sidecar).
	Output *os.File
}

// ExitCode is the exit code a wrapper passes on when err kept COMMAND from
// starting: 127 when it was not found, 126 when it could not be executed.
// ok is false for any other error.
func ExitCode(err error) (code int, ok bool) {
	var execErr *ExecError
	if errors.As(err, &execErr) {
		return execErr.Code, true
	}
	return 0, false
}

// Child is a started command. Its process group ID equals its PID.
type Child struct {
	pid    int
	done   chan struct{}
	status Status
}

// PID is the child's process ID, which is also its process group ID.
func (c *Child) PID() int { return c.pid }

// Done is closed when the child has ended and been reaped.
func (c *Child) Done() <-chan struct{} { return c.done }

// Status is how the child ended; valid once Done is closed.
func (c *Child) Status() Status { return c.status }

// Signal sends sig to the child alone.
func (c *Child) Signal(sig syscall.Signal) error {
	return ignoreGone(unix.Kill(c.pid, sig))
}

// SignalGroup sends sig to the child's whole process group: the child and
// everything it started that did not leave the group.
func (c *Child) SignalGroup(sig syscall.Signal) error {
	return ignoreGone(unix.Kill(-c.pid, sig))
}

// ignoreGone treats "no such process" as success: the target is already
// gone, which is what a stop wanted.
func ignoreGone(err error) error {
	if errors.Is(err, unix.ESRCH) {
		return nil
	}
	return err
}

// Start runs argv in a new process group. Errors finding or executing the
// program are *ExecError.
func Start(argv []string, opts Options) (*Child, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, &ExecError{Code: ExitNotFound, Err: errors.New("empty command")}
	}
	env := os.Environ()
	path, err := lookPath(argv[0], env)
	if err != nil {
		return nil, err
	}
	files := []uintptr{0, 1, 2}
	if opts.Output != nil {
		null, err := os.Open(os.DevNull)
		if err != nil {
			return nil, err
		}
		defer null.Close()
		files = []uintptr{null.Fd(), opts.Output.Fd(), opts.Output.Fd()}
	}
	attr := &syscall.ProcAttr{
		Env:   env,
		Files: files,
		Sys:   &syscall.SysProcAttr{Setpgid: true, Foreground: opts.Foreground, Ctty: 0},
	}
	r := activeReaper.Load()
	if r != nil {
		// Registered before the reaper can reap it, however soon it exits.
		r.mu.Lock()
		defer r.mu.Unlock()
	}
	pid, err := syscall.ForkExec(path, argv, attr)
	if err != nil {
		return nil, execError(path, err)
	}
	c := &Child{pid: pid, done: make(chan struct{})}
	if r != nil {
		r.children[pid] = c
	} else {
		go c.wait()
	}
	return c, nil
}

// wait blocks in wait4 for this child only; used when no reaper owns
// waiting for all children.
func (c *Child) wait() {
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(c.pid, &ws, 0, nil)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EINTR) {
			// Cannot happen for our own child; report it as a failure
			// rather than hang.
			c.finish(Status{Code: 255})
			return
		}
	}
	c.finish(statusOf(ws))
}

func (c *Child) finish(s Status) {
	c.status = s
	close(c.done)
}

// lookPath resolves the program like a shell: a name with a slash is used as
// is, anything else is searched in the child's PATH.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		info, err := os.Stat(name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return "", &ExecError{Path: name, Code: ExitNotFound, Err: fs.ErrNotExist}
		case err != nil:
			return "", &ExecError{Path: name, Code: ExitNotExecutable, Err: err}
		case info.IsDir():
			return "", &ExecError{Path: name, Code: ExitNotExecutable, Err: errors.New("is a directory")}
		case info.Mode()&0o111 == 0:
			return "", &ExecError{Path: name, Code: ExitNotExecutable, Err: fs.ErrPermission}
		}
		return name, nil
	}
	pathList := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathList = v
		}
	}
	denied := ""
	for _, dir := range filepath.SplitList(pathList) {
		candidate := filepath.Join(cmp.Or(dir, "."), name)
		info, err := os.Stat(candidate)
		if err != nil || info.IsDir() {
			continue
		}
		if info.Mode()&0o111 == 0 {
			// Remember the first: if nothing executable is found, "permission
			// denied" is a better report than "not found".
			denied = cmp.Or(denied, candidate)
			continue
		}
		return candidate, nil
	}
	if denied != "" {
		return "", &ExecError{Path: denied, Code: ExitNotExecutable, Err: fs.ErrPermission}
	}
	return "", &ExecError{Path: name, Code: ExitNotFound, Err: fmt.Errorf("not in PATH %q: %w", pathList, exec.ErrNotFound)}
}

// execError classifies an execve failure the way tini does: a missing file
// (including a missing script interpreter) is 127, anything else 126.
func execError(path string, err error) error {
	code := ExitNotExecutable
	if errors.Is(err, syscall.ENOENT) {
		code = ExitNotFound
	}
	return &ExecError{Path: path, Code: code, Err: err}
}
