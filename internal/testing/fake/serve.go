package fake

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

// setupLimit bounds the fake's own waits while it sets up (for its
// grandchild or orphan to show itself).
const setupLimit = time.Minute

// becomeReady waits -ready-delay (part of what the caller asked for, not
// synchronisation), records "ready", then opens -listen and creates
// -touch. The record comes first, so it is never later than the moment a
// readiness check could pass.
func (f *fake) becomeReady() error {
	c := f.c
	if c.readyDelay > 0 {
		time.Sleep(c.readyDelay)
	}
	f.rec.add("ready", "")
	if c.listen != "" {
		l, err := net.Listen("tcp", c.listen)
		if err != nil {
			return fmt.Errorf("-listen: %w", err)
		}
		go acceptAll(l)
	}
	if c.touch != "" {
		return writeAtomic(c.touch, "")
	}
	return nil
}

func acceptAll(l net.Listener) {
	for {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		conn.Close()
	}
}

// serveHTTP answers GET / with 200 and POST /quit as -quit says. In exit
// mode the answer is flushed before quit is closed, so the caller sees the
// 200 it asked for before the process exits.
func (f *fake) serveHTTP(quit chan struct{}) error {
	l, err := net.Listen("tcp", f.c.http)
	if err != nil {
		return fmt.Errorf("-http: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("POST /quit", func(w http.ResponseWriter, r *http.Request) {
		f.rec.add("quit", f.c.quit)
		switch f.c.quit {
		case "fail":
			http.Error(w, "refusing to quit", http.StatusInternalServerError)
		case "ignore":
			fmt.Fprintln(w, "not quitting")
		default:
			fmt.Fprintln(w, "bye")
			w.(http.Flusher).Flush()
			select {
			case <-quit:
			default:
				close(quit)
			}
		}
	})
	go http.Serve(l, mux)
	return nil
}

// startGrandchild starts the fake again as a grandchild that ignores every
// stop signal and stays in this process group, as a sidecar's helper
// process would, and waits until it has set up. It is registered in -pids
// at once, before anything can reap it, so its PID is still its own.
func startGrandchild(c *config) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, "-role", "grandchild", "-pidfile", c.grandchild, "-max-life", c.maxLife.String())
	cmd.Args[0] = "fake" // how testscript's test binary knows what to run
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if c.ownSession {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	err = registerPID(c.pids, c.name+"-grandchild", cmd.Process.Pid)
	// Reap it if it ends while we run; once we are gone it is an orphan.
	go cmd.Wait()
	if err != nil {
		return err
	}
	return waitForFile(c.grandchild, setupLimit)
}

// grandchild ignores every stop signal and lives until -max-life or
// SIGKILL.
func grandchild(c *config) int {
	signal.Ignore(asSignals(recordable)...)
	if err := writeAtomic(c.pidfile, fmt.Sprint(os.Getpid())); err != nil {
		fmt.Fprintln(os.Stderr, "fake (grandchild):", err)
		return 99
	}
	time.Sleep(c.maxLife)
	return 98
}

// doubleFork leaves an orphan: an intermediate starts it and exits at
// once, and, reaped here, leaves it to the nearest subreaper or PID 1.
func doubleFork(c *config) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, "-role", "orphan-parent", "-pidfile", c.doubleFork, "-max-life", c.maxLife.String())
	cmd.Args[0] = "fake"
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("-double-fork: %w", err)
	}
	return waitForFile(c.doubleFork, setupLimit)
}

// orphanParent starts the orphan (a fake that writes its PID to -pidfile
// and exits once PIDFILE.exit exists) and exits at once.
func orphanParent(c *config) int {
	self, err := os.Executable()
	if err == nil {
		cmd := exec.Command(self, "-pidfile", c.pidfile, "-wait-file", c.pidfile+".exit", "-max-life", c.maxLife.String())
		cmd.Args[0] = "fake"
		err = cmd.Start()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake (orphan's parent):", err)
		return 99
	}
	return 0
}

// startDaemon starts the daemon of -daemonize in this process group, as
// a daemonizing server forks before its parent exits.
func startDaemon(c *config) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(self, "-role", "daemon", "-parent", strconv.Itoa(os.Getpid()), "-pidfile", c.daemonize,
		"-wait-file", c.daemonize+".exit", "-max-life", c.maxLife.String())
	cmd.Args[0] = "fake"
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	// SIGWINCH, ignored by default, tells the daemon that its parent is
	// gone (the runtime signals it at once if the parent already is).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGWINCH}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("-daemonize: %w", err)
	}
	return nil
}

// daemon waits until the command that started it has exited, then leaves
// its process group (setsid) and runs as a fake of its own. Between that
// exit and the setsid, it is still in the command's process group: the
// moment that tells a daemon from what a crashed command leaves behind
// only by who its parent is.
func daemon(c *config) int {
	parentGone := make(chan os.Signal, 1)
	signal.Notify(parentGone, syscall.SIGWINCH)
	if os.Getppid() == c.parent {
		select {
		case <-parentGone:
		case <-time.After(c.maxLife):
			fmt.Fprintln(os.Stderr, "fake (daemon): the command that started it never exited")
			return 98
		}
	}
	signal.Stop(parentGone)
	if _, err := syscall.Setsid(); err != nil {
		fmt.Fprintln(os.Stderr, "fake (daemon): setsid:", err)
		return 99
	}
	c.role, c.parent = "", 0
	return run(c)
}

func asSignals[S os.Signal](sigs []S) []os.Signal {
	out := make([]os.Signal, len(sigs))
	for i, s := range sigs {
		out[i] = s
	}
	return out
}

func writeAtomic(path, content string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func appendLine(path, line string) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	fmt.Fprintln(f, line)
	f.Close()
}

// fileAppears returns a channel closed once path exists (the fake's
// -max-life bounds the wait).
func fileAppears(path string) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		for !exists(path) {
			time.Sleep(2 * time.Millisecond)
		}
		close(ch)
	}()
	return ch
}

// waitForFile polls for path, which another process of the fake's makes.
func waitForFile(path string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for !exists(path) {
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not appear within %s", path, limit)
		}
		time.Sleep(2 * time.Millisecond)
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
