// Package fake is the one stand-in for a job's command and a sidecar that
// the project's tests use: the testscript scripts (registered there as
// `fake`), the soak and the benchmarks (both build cmd/fake, a thin main).
// Its flags choose what it does: become ready (a file, a TCP port, HTTP)
// after a delay, catch, ignore or die of its stop signals, crash its first
// runs, exit or die by a signal after a time or when a file appears, start
// a grandchild or an orphan. It never sleeps to synchronise: it waits for
// files or signals, and any delay is one the caller asked for.
//
// It records what happens to it for checks from the outside: signal names
// (-record, for scripts to compare), timed events (-events: start, ready,
// stop, quit, exit, crash, error; see Event) and every process it becomes
// (-pids, for leak checks). Each record is one write(2) on an O_APPEND
// file, so records of several processes never mix.
package fake

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/job-signal/job-signal/internal/testing/procinfo"
)

// signals are those the flags name.
var signals = []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT,
	syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGKILL}

// recordable are the signals -record catches and names; the grandchild
// ignores them all.
var recordable = signals[:6]

type config struct {
	role    string // "" or an internal role: grandchild, orphan-parent
	name    string
	pidfile string
	pids    string
	events  string
	record  string
	label   string
	maxLife time.Duration

	counter   string
	crashes   int
	crashCode int

	readyDelay time.Duration
	touch      string
	listen     string
	http       string
	quit       string

	stopSignals []syscall.Signal
	onStop      string // die, ignore, or exit:N
	stopCode    int    // N of exit:N

	grandchild string
	ownSession bool
	doubleFork string
	daemonize  string
	parent     int // -role daemon: the PID of the command that started it

	fill     string
	waitFile string
	run      time.Duration
	exitCode int
	killSelf syscall.Signal

	printEnv string
	readLine bool
}

// parse reads the flags. Errors name the flag and what it takes.
func parse(args []string) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("fake", flag.ContinueOnError)
	fs.StringVar(&c.role, "role", "", "(internal) grandchild, orphan-parent or daemon")
	fs.StringVar(&c.name, "name", "fake", "name of this process in -pids records")
	fs.StringVar(&c.pidfile, "pidfile", "", "write the PID here once set up")
	fs.StringVar(&c.pids, "pids", "", "append 'NAME PID STARTTIME' here for this process and its grandchild")
	fs.StringVar(&c.events, "events", "", "append 'EVENT UNIXNANO DETAIL' records here")
	fs.StringVar(&c.record, "record", "", "append the name of every signal received (TERM, INT, HUP, QUIT, USR1, USR2) here")
	fs.StringVar(&c.label, "label", "", "prefix -record lines with this label and a space")
	fs.DurationVar(&c.maxLife, "max-life", 10*time.Minute, "exit 98 after this long whatever happens, so a broken test never leaves it running")
	fs.StringVar(&c.counter, "counter", "", "file counting the runs, for -crash")
	fs.IntVar(&c.crashes, "crash", 0, "exit with -crash-code at once on the first N runs (counted in -counter)")
	fs.IntVar(&c.crashCode, "crash-code", 1, "exit code of a crashing run")
	fs.DurationVar(&c.readyDelay, "ready-delay", 0, "become ready this long after setting up")
	fs.StringVar(&c.touch, "touch", "", "create this file once ready (after -pidfile, -grandchild, -http and -listen)")
	fs.StringVar(&c.listen, "listen", "", "accept TCP connections on this address once ready")
	fs.StringVar(&c.http, "http", "", "serve HTTP here from the start: GET / answers 200, POST /quit as -quit says")
	fs.StringVar(&c.quit, "quit", "exit", "POST /quit: exit (answer 200, exit 0), ignore (answer 200, keep running), fail (answer 500)")
	stop := fs.String("stop-signal", "TERM,INT", "the signals that ask this process to stop, comma-separated")
	fs.StringVar(&c.onStop, "on-stop", "die", "on a stop signal: die (by the signal), ignore, or exit:N")
	fs.StringVar(&c.grandchild, "grandchild", "", "start a grandchild in this process group that ignores every stop signal; its PID goes here")
	fs.BoolVar(&c.ownSession, "grandchild-session", false, "start the -grandchild in a session of its own (setsid), outside this process group, as PostgreSQL's backends are")
	fs.StringVar(&c.daemonize, "daemonize", "", "daemonize as nginx does: start a daemon in this process group and exit 0 at once; the daemon leaves the group (setsid) only once this process has exited, writes its PID here and ends on a stop signal or once FILE.exit exists")
	fs.IntVar(&c.parent, "parent", 0, "(internal) -role daemon: the PID of the command that started it")
	fs.StringVar(&c.doubleFork, "double-fork", "", "start an orphan (via an intermediate that exits at once) that writes its PID here and exits when FILE.exit exists")
	fs.StringVar(&c.fill, "fill", "", "before ending by itself, write zeros to this file until its filesystem is full (at most 64 MiB)")
	fs.StringVar(&c.waitFile, "wait-file", "", "end once this file exists")
	fs.DurationVar(&c.run, "run", -1, "end this long after starting (negative: not by time)")
	fs.IntVar(&c.exitCode, "exit", -1, "end with this exit code; with neither -wait-file nor -run, end at once once ready")
	killSelf := fs.String("kill-self", "", "end by dying of this signal instead of exiting; with neither -wait-file nor -run, at once once ready")
	fs.StringVar(&c.printEnv, "print-env", "", "print the value of this environment variable")
	fs.BoolVar(&c.readLine, "read-line", false, "read a line from stdin, print it and exit")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q: every setting is a flag", fs.Arg(0))
	}
	for _, name := range strings.Split(*stop, ",") {
		sig, err := procinfo.ParseSignal(name, signals)
		if err != nil {
			return nil, fmt.Errorf("-stop-signal: %w", err)
		}
		c.stopSignals = append(c.stopSignals, sig)
	}
	if *killSelf != "" {
		sig, err := procinfo.ParseSignal(*killSelf, signals)
		if err != nil {
			return nil, fmt.Errorf("-kill-self: %w", err)
		}
		c.killSelf = sig
	}
	switch {
	case c.onStop == "die" || c.onStop == "ignore":
	case strings.HasPrefix(c.onStop, "exit:"):
		n, err := strconv.Atoi(strings.TrimPrefix(c.onStop, "exit:"))
		if err != nil || n < 0 || n > 255 {
			return nil, fmt.Errorf("-on-stop %q: want exit:N with N from 0 to 255", c.onStop)
		}
		c.stopCode = n
	default:
		return nil, fmt.Errorf("-on-stop %q: want die, ignore or exit:N", c.onStop)
	}
	if c.quit != "exit" && c.quit != "ignore" && c.quit != "fail" {
		return nil, fmt.Errorf("-quit %q: want exit, ignore or fail", c.quit)
	}
	if c.waitFile != "" && c.run >= 0 {
		return nil, fmt.Errorf("-wait-file and -run both say when to end: give one")
	}
	if c.exitCode > 255 {
		return nil, fmt.Errorf("-exit %d: want 0 to 255", c.exitCode)
	}
	return c, nil
}

// endsAtOnce: told how to end, and not when; it ends once ready.
func (c *config) endsAtOnce() bool {
	return c.waitFile == "" && c.run < 0 && (c.exitCode >= 0 || c.killSelf != 0)
}

// Main runs the fake with args (without the program name) and returns its
// exit code: 2 for bad flags, 98 when -max-life ran out, 99 when it failed.
func Main(args []string) int {
	c, err := parse(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake:", err)
		return 2
	}
	switch c.role {
	case "":
	case "grandchild":
		return grandchild(c)
	case "orphan-parent":
		return orphanParent(c)
	case "daemon":
		return daemon(c)
	default:
		fmt.Fprintf(os.Stderr, "fake: -role %q: want grandchild, orphan-parent or daemon\n", c.role)
		return 2
	}
	return run(c)
}
