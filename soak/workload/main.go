// Command workload plays a Job's main command or one of its sidecars in the
// soak (see ../README.md). Flags choose its behaviour: exit with a code, die
// by a signal, catch or ignore the stop signal, crash its first runs, become
// ready after a delay (a file or a TCP port), serve POST /quit, fork a
// grandchild that ignores every stop signal.
//
// It records what happens to it, so the soak can check the product from the
// outside: every process it becomes appends "NAME PID STARTTIME" to -pids
// (the soak's leak check), and every event is appended to -rec as
// "EVENT UNIXNANO DETAIL" (start, ready, stop, quit, exit, crash, error).
// Each record is one write(2) on an O_APPEND file, so records from several
// processes never mix.
package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/job-signal/job-signal/soak/procfs"
)

// signals are the signals the soak uses by name.
var signals = map[string]syscall.Signal{
	"TERM": syscall.SIGTERM, "INT": syscall.SIGINT, "HUP": syscall.SIGHUP,
	"QUIT": syscall.SIGQUIT, "USR1": syscall.SIGUSR1, "USR2": syscall.SIGUSR2,
	"KILL": syscall.SIGKILL, "ALRM": syscall.SIGALRM,
}

// stopSignals are those a sidecar-watch may be told to stop with (KILL
// aside): the grandchild ignores them all, so only SIGKILL ends it.
var stopSignals = []os.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP,
	syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}

type config struct {
	role    string
	name    string
	recPath string
	pids    string
	maxLife time.Duration

	counter   string
	crashes   int
	crashCode int

	readyFile  string
	readyTCP   string
	readyDelay time.Duration

	quitAddr string
	quitMode string

	stopSignal string
	onStop     string
	stopCode   int

	grandchild bool

	run      time.Duration
	exitCode int
	killSelf string
}

func parse(args []string) (*config, error) {
	var c config
	fs := flag.NewFlagSet("workload", flag.ContinueOnError)
	fs.StringVar(&c.role, "role", "main", "main, or grandchild (started by -grandchild)")
	fs.StringVar(&c.name, "name", "workload", "name used in -pids records")
	fs.StringVar(&c.recPath, "rec", "", "append event records here")
	fs.StringVar(&c.pids, "pids", "", "append 'NAME PID STARTTIME' here for every process")
	fs.DurationVar(&c.maxLife, "max-life", 2*time.Minute, "exit after this long whatever happens, so a broken soak never leaves processes behind for ever")
	fs.StringVar(&c.counter, "counter", "", "file counting the runs, for -crash")
	fs.IntVar(&c.crashes, "crash", 0, "exit with -crash-code at once on the first N runs")
	fs.IntVar(&c.crashCode, "crash-code", 1, "exit code of a crashing run")
	fs.StringVar(&c.readyFile, "ready-file", "", "create this file once ready")
	fs.StringVar(&c.readyTCP, "ready-tcp", "", "accept TCP connections on this address once ready")
	fs.DurationVar(&c.readyDelay, "ready-delay", 0, "become ready this long after starting")
	fs.StringVar(&c.quitAddr, "quit", "", "serve POST /quit on this address")
	fs.StringVar(&c.quitMode, "quit-mode", "exit", "POST /quit: exit (200, then exit 0), ignore (200, keep running), fail (500)")
	fs.StringVar(&c.stopSignal, "stop-signal", "", "the signal that asks this process to stop (TERM, INT, ...)")
	fs.StringVar(&c.onStop, "on-stop", "exit", "on -stop-signal: exit (with -stop-code), raise (die by the signal), ignore")
	fs.IntVar(&c.stopCode, "stop-code", 0, "exit code after -stop-signal")
	fs.BoolVar(&c.grandchild, "grandchild", false, "start a grandchild, in this process group, that ignores every stop signal")
	fs.DurationVar(&c.run, "run", -1, "end by itself after this long (-exit or -kill-self); negative: run until stopped")
	fs.IntVar(&c.exitCode, "exit", 0, "exit code when -run ends")
	fs.StringVar(&c.killSelf, "kill-self", "", "when -run ends, die by this signal instead of exiting")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	for _, s := range []string{c.stopSignal, c.killSelf} {
		if _, ok := signals[s]; s != "" && !ok {
			return nil, fmt.Errorf("unknown signal %q", s)
		}
	}
	return &c, nil
}

func main() {
	c, err := parse(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "workload:", err)
		os.Exit(2)
	}
	if c.role == "grandchild" {
		os.Exit(grandchild(c))
	}
	os.Exit(run(c))
}

// recorder appends event records to -rec.
type recorder struct{ f *os.File }

func (r recorder) add(event, detail string) {
	if r.f == nil {
		return
	}
	// One write per record: O_APPEND keeps concurrent records whole.
	r.f.WriteString(fmt.Sprintf("%s %d %s\n", event, time.Now().UnixNano(), detail))
}

func openRecorder(path string) recorder {
	if path == "" {
		return recorder{}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "workload:", err)
		return recorder{}
	}
	return recorder{f}
}

// registerPID appends one process to -pids, with its start time so that a
// later process reusing the PID is not taken for it.
func registerPID(path, name string, pid int) error {
	if path == "" {
		return nil
	}
	st, err := procfs.ReadStat(pid)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString(fmt.Sprintf("%s %d %d\n", name, pid, st.StartTime))
	return err
}

func run(c *config) int {
	rec := openRecorder(c.recPath)
	fail := func(err error) int {
		rec.add("error", strings.ReplaceAll(err.Error(), "\n", " "))
		fmt.Fprintln(os.Stderr, "workload:", err)
		return 98
	}
	if err := registerPID(c.pids, c.name, os.Getpid()); err != nil {
		return fail(err)
	}
	if crash, err := crashThisRun(c); err != nil {
		return fail(err)
	} else if crash {
		rec.add("crash", strconv.Itoa(c.crashCode))
		return c.crashCode
	}
	// Catch the stop signal before recording "start": a start record
	// means a stop signal from now on is seen and recorded.
	stops := make(chan os.Signal, 4)
	if c.stopSignal != "" && c.stopSignal != "KILL" {
		signal.Notify(stops, signals[c.stopSignal])
	}
	if c.grandchild {
		if err := startGrandchild(c); err != nil {
			return fail(err)
		}
	}
	quit := make(chan struct{})
	if c.quitAddr != "" {
		if err := serveQuit(c, rec, quit); err != nil {
			return fail(err)
		}
	}
	rec.add("start", "pid="+strconv.Itoa(os.Getpid()))
	readyFailed := make(chan error, 1)
	if c.readyFile != "" || c.readyTCP != "" {
		go func() { readyFailed <- becomeReady(c, rec) }()
	}
	var runEnds <-chan time.Time
	if c.run >= 0 {
		runEnds = time.After(c.run)
	}
	expired := time.After(c.maxLife)
	for {
		select {
		case sig := <-stops:
			rec.add("stop", c.stopSignal)
			switch c.onStop {
			case "ignore":
				continue
			case "raise":
				rec.add("exit", "signal="+c.stopSignal)
				return raise(sig.(syscall.Signal))
			default:
				rec.add("exit", "code="+strconv.Itoa(c.stopCode))
				return c.stopCode
			}
		case <-quit:
			rec.add("exit", "code=0")
			return 0
		case err := <-readyFailed:
			if err != nil {
				return fail(err)
			}
		case <-runEnds:
			return end(c, rec)
		case <-expired:
			return fail(fmt.Errorf("still running after -max-life %s", c.maxLife))
		}
	}
}

// crashThisRun counts this run in -counter and says whether it is one of
// the first -crash runs, which fail at once.
func crashThisRun(c *config) (bool, error) {
	if c.counter == "" || c.crashes == 0 {
		return false, nil
	}
	n := 0
	if data, err := os.ReadFile(c.counter); err == nil {
		n, _ = strconv.Atoi(strings.TrimSpace(string(data)))
	} else if !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	n++
	if err := os.WriteFile(c.counter, []byte(strconv.Itoa(n)), 0o644); err != nil {
		return false, err
	}
	return n <= c.crashes, nil
}

// end finishes a run that ends by itself: by a signal or with an exit code.
func end(c *config, rec recorder) int {
	if c.killSelf != "" {
		rec.add("exit", "signal="+c.killSelf)
		return raise(signals[c.killSelf])
	}
	rec.add("exit", "code="+strconv.Itoa(c.exitCode))
	return c.exitCode
}

// raise dies by sig, with its default action restored. The Go runtime only
// dies of HUP, INT and TERM (and QUIT, after a stack dump, with code 2);
// it ignores USR1, USR2 and ALRM when nothing asked for them, so for those
// it dies by SIGKILL instead: still a death by signal, as the soak wants.
func raise(sig syscall.Signal) int {
	switch sig {
	case syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT, syscall.SIGKILL:
	default:
		sig = syscall.SIGKILL
	}
	signal.Reset(sig)
	syscall.Kill(os.Getpid(), sig)
	select {} // the signal ends us
}

// becomeReady waits -ready-delay (part of the scenario, not
// synchronisation), records "ready", then creates -ready-file or opens
// -ready-tcp. The record comes first, so it is never later than the moment
// a readiness check could pass.
func becomeReady(c *config, rec recorder) error {
	time.Sleep(c.readyDelay)
	rec.add("ready", "")
	if c.readyFile != "" {
		return os.WriteFile(c.readyFile, nil, 0o644)
	}
	ln, err := net.Listen("tcp", c.readyTCP)
	if err != nil {
		return fmt.Errorf("ready port: %w", err)
	}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conn.Close()
		}
	}()
	return nil
}

// serveQuit answers POST /quit as -quit-mode says. In exit mode the answer
// is flushed before quit is closed, so the caller sees the 200 it asked
// for before the process exits.
func serveQuit(c *config, rec recorder, quit chan struct{}) error {
	ln, err := net.Listen("tcp", c.quitAddr)
	if err != nil {
		return fmt.Errorf("quit port: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/quit", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		rec.add("quit", c.quitMode)
		switch c.quitMode {
		case "fail":
			http.Error(w, "refusing to quit", http.StatusInternalServerError)
		case "ignore":
			w.WriteHeader(http.StatusOK)
		default:
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			select {
			case <-quit:
			default:
				close(quit)
			}
		}
	})
	go http.Serve(ln, mux)
	return nil
}

// startGrandchild starts this program again as a grandchild that ignores
// every stop signal and stays in our process group, as a sidecar's helper
// process would. It is registered here, before "start" is recorded, so the
// leak check knows it even if it is killed before it runs.
func startGrandchild(c *config) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	// -pids is not used by the grandchild, but it puts the lifecycle's
	// directory on its command line, where the soak's leak check looks.
	cmd := exec.Command(self, "-role", "grandchild", "-name", c.name+"-grandchild", "-pids", c.pids, "-max-life", c.maxLife.String())
	if err := cmd.Start(); err != nil {
		return err
	}
	// Registered before anything reaps it, so its PID is still its own.
	err = registerPID(c.pids, c.name+"-grandchild", cmd.Process.Pid)
	// Reap it if it ends while we run; once we are gone it is an orphan.
	go cmd.Wait()
	return err
}

func grandchild(c *config) int {
	signal.Ignore(stopSignals...)
	time.Sleep(c.maxLife)
	return 0
}
