package fake

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/job-signal/job-signal/internal/proc"
)

// fake is one running fake.
type fake struct {
	c   *config
	rec recorder
}

// fail records and reports a failure of the fake itself (not a behaviour
// it was asked for).
func (f *fake) fail(err error) int {
	f.rec.add("error", strings.ReplaceAll(err.Error(), "\n", " "))
	fmt.Fprintln(os.Stderr, "fake:", err)
	return 99
}

func run(c *config) int {
	f := &fake{c: c}
	// Catch signals first: a stop signal that comes while the fake sets up
	// is acted on once it runs, not the death of a process that had no
	// handler yet. Nothing shows that the fake runs (a pidfile, a start
	// record) before this.
	caught := make(chan os.Signal, 16)
	if !c.readLine {
		signal.Notify(caught, f.catches()...)
	}
	var err error
	if f.rec, err = openRecorder(c.events); err != nil {
		return f.fail(err)
	}
	// A fake that a broken test leaves behind must not run for ever.
	time.AfterFunc(c.maxLife, func() {
		f.fail(fmt.Errorf("still running after -max-life %s", c.maxLife))
		os.Exit(98)
	})
	if err := registerPID(c.pids, c.name, os.Getpid()); err != nil {
		return f.fail(err)
	}
	if crash, err := crashThisRun(c); err != nil {
		return f.fail(err)
	} else if crash {
		fmt.Fprintf(os.Stderr, "fake: crashing on purpose (one of the first %d runs)\n", c.crashes)
		f.rec.add("crash", strconv.Itoa(c.crashCode))
		return c.crashCode
	}
	if c.readLine {
		line, err := bufio.NewReader(os.Stdin).ReadString('\n')
		if err != nil {
			return f.fail(err)
		}
		fmt.Printf("read: %s", line)
		return 0
	}
	if c.printEnv != "" {
		fmt.Printf("%s=%s\n", c.printEnv, os.Getenv(c.printEnv))
	}
	if c.pidfile != "" {
		if err := writeAtomic(c.pidfile, strconv.Itoa(os.Getpid())); err != nil {
			return f.fail(err)
		}
	}
	if c.grandchild != "" {
		if err := startGrandchild(c); err != nil {
			return f.fail(err)
		}
	}
	if c.daemonize != "" {
		if err := startDaemon(c); err != nil {
			return f.fail(err)
		}
		return 0
	}
	if c.doubleFork != "" {
		if err := doubleFork(c); err != nil {
			return f.fail(err)
		}
	}
	quit := make(chan struct{})
	if c.http != "" {
		if err := f.serveHTTP(quit); err != nil {
			return f.fail(err)
		}
	}
	f.rec.add("start", "pid="+strconv.Itoa(os.Getpid()))
	ready := make(chan error, 1)
	go func() { ready <- f.becomeReady() }()
	var runEnds <-chan time.Time
	if c.run >= 0 {
		runEnds = time.After(c.run)
	}
	var fileAppeared <-chan struct{}
	if c.waitFile != "" {
		fileAppeared = fileAppears(c.waitFile)
	}
	for {
		select {
		case s := <-caught:
			sig := s.(syscall.Signal)
			if c.record != "" {
				line := proc.SignalName(sig)
				if c.label != "" {
					line = c.label + " " + line
				}
				appendLine(c.record, line)
			}
			if code, stop := f.onSignal(sig); stop {
				return code
			}
		case <-quit:
			f.rec.add("exit", "code=0")
			return 0
		case err := <-ready:
			if err != nil {
				return f.fail(err)
			}
			if c.endsAtOnce() {
				return f.end()
			}
		case <-runEnds:
			return f.end()
		case <-fileAppeared:
			return f.end()
		}
	}
}

// catches are the signals the fake handles itself: every recordable one
// with -record; else the stop signals, unless they are to kill it and
// nothing is to be recorded first. SIGKILL cannot be caught.
func (f *fake) catches() []os.Signal {
	var sigs []syscall.Signal
	switch {
	case f.c.record != "":
		sigs = recordable
	case f.c.onStop != "die" || f.c.events != "":
		sigs = f.c.stopSignals
	}
	var out []os.Signal
	for _, s := range sigs {
		if s != syscall.SIGKILL {
			out = append(out, s)
		}
	}
	return out
}

// onSignal acts on a caught signal: a stop signal as -on-stop says; any
// other (caught only to be recorded) is ignored.
func (f *fake) onSignal(sig syscall.Signal) (code int, stop bool) {
	if !slices.Contains(f.c.stopSignals, sig) {
		return 0, false
	}
	name := proc.SignalName(sig)
	f.rec.add("stop", name)
	switch f.c.onStop {
	case "ignore":
		return 0, false
	case "die":
		f.rec.add("exit", "signal="+name)
		return raise(sig), true
	}
	f.rec.add("exit", "code="+strconv.Itoa(f.c.stopCode))
	return f.c.stopCode, true
}

// end finishes a run that ends by itself: by a signal or with a code.
func (f *fake) end() int {
	if f.c.fill != "" {
		if err := Fill(f.c.fill); err != nil {
			return f.fail(err)
		}
		f.rec.add("full", f.c.fill)
	}
	if f.c.killSelf != 0 {
		f.rec.add("exit", "signal="+proc.SignalName(f.c.killSelf))
		return raise(f.c.killSelf)
	}
	code := max(f.c.exitCode, 0)
	f.rec.add("exit", "code="+strconv.Itoa(code))
	return code
}

// raise dies by sig, with its default action restored. The Go runtime only
// dies of HUP, INT and TERM (and QUIT, after a stack dump, with code 2);
// it ignores USR1 and USR2 when nothing asked for them, so for those it
// dies by SIGKILL instead: still a death by signal.
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

// fillLimit keeps Fill from filling a real disk by mistake.
const fillLimit = 64 << 20

// Fill appends zeros to the file at path until its filesystem has no space
// left (ENOSPC), which is what it is for: a small tmpfs. More than
// fillLimit bytes is an error.
func Fill(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("fill: %w", err)
	}
	defer f.Close()
	zeros := make([]byte, 4096)
	for written := 0; written <= fillLimit; {
		n, err := f.Write(zeros)
		written += n
		if errors.Is(err, syscall.ENOSPC) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("fill %s: %w", path, err)
		}
	}
	return fmt.Errorf("fill %s: wrote %d bytes and still not full: not a small filesystem", path, fillLimit)
}
