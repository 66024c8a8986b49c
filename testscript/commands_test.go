package testscript

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/job-signal/job-signal/internal/testing/procinfo"
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
//	expand SRC DST             copy SRC to DST with $VAR and ${VAR} replaced
//	                           by the script's environment (config files of
//	                           real sidecars, with the ports freeport chose)
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
	"expand":    cmdExpand,
	"killpid":   cmdKillPID,
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

func cmdWaitGone(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitgone PIDFILE")
	}
	pid := readPID(ts, args[0])
	poll(ts, fmt.Sprintf("process %d (%s) to end", pid, args[0]), func() bool { return !procinfo.Alive(pid) })
}

func cmdAlive(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: alive PIDFILE")
	}
	pid := readPID(ts, args[0])
	if procinfo.Alive(pid) == neg {
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
	sig, err := procinfo.ParseSignal(args[1], allSignals)
	ts.Check(err)
	ts.Check(syscall.Kill(readPID(ts, args[0]), sig))
}

func cmdExpand(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: expand SRC DST")
	}
	data, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(os.Expand(string(data), ts.Getenv)), 0o644))
}
