package sidecarwatch

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/job-signal/job-signal/internal/proc"
)

func TestDecideSignal(t *testing.T) {
	const (
		term, intr, quit = syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT
		hup, usr1, usr2  = syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2
	)
	for _, tc := range []struct {
		sig, stopSignal syscall.Signal
		terminating     bool
		want            signalAction
	}{
		{term, term, false, sigTerminating},
		{intr, term, false, sigTerminating},
		{quit, term, false, sigTerminating},
		{hup, term, false, sigForward},
		{usr1, term, false, sigForward},
		// The image's STOPSIGNAL, which inject writes as --stop-signal, is
		// what the runtime sends on the Pod's deletion.
		{usr1, usr1, false, sigTerminating},
		{usr2, usr1, false, sigForward},
		{hup, hup, false, sigTerminating},
		{term, usr1, false, sigTerminating},
		// Again while terminating.
		{term, term, true, sigAgain},
		{usr1, usr1, true, sigAgain},
		{intr, term, true, sigStopNow},
		{hup, term, true, sigForward},
	} {
		if got := decideSignal(tc.sig, tc.stopSignal, tc.terminating); got != tc.want {
			t.Errorf("decideSignal(%s, --stop-signal %s, terminating %v) = %d, want %d", proc.SignalName(tc.sig), proc.SignalName(tc.stopSignal), tc.terminating, got, tc.want)
		}
	}
}

func TestDecideExit(t *testing.T) {
	exited := func(code int) proc.Status { return proc.Status{Code: code} }
	for _, tc := range []struct {
		name        string
		status      proc.Status
		ranFor      time.Duration
		terminating bool
		restart     string
		adopted     int
		reaping     bool
		want        exitAction
		code        int
		note, why   string
	}{
		{"crash, Always", exited(1), time.Minute, false, "Always", 0, false, exitRestart, 0, "", ""},
		{"crash, Never", exited(3), time.Minute, false, "Never", 0, false, exitFail, 3, "not restarting (--restart Never)", "exited with code 3 by itself"},
		{"exit 0, Never", exited(0), time.Minute, false, "Never", 0, false, exitStopped, 0, "not restarting", "exited with code 0 by itself"},
		{"while the Pod terminates", exited(1), time.Minute, true, "Always", 0, false, exitStopped, 0, "", "the sidecar exited while the Pod is terminating"},
		// A daemon: exit 0 at once, its processes left behind.
		{"daemonized, adopted", exited(0), 5 * time.Millisecond, false, "Always", 2, true, exitAdopt, 0, "the sidecar daemonized", ""},
		{"daemonized, adopted, Never", exited(0), 5 * time.Millisecond, false, "Never", 2, true, exitAdopt, 0, "daemon off;", ""},
		{"quick exit 0, not reaping", exited(0), 5 * time.Millisecond, false, "Always", 0, false, exitRestart, 0, "--subreaper", ""},
		{"quick exit 0, reaping, nothing left", exited(0), 5 * time.Millisecond, false, "Always", 0, true, exitRestart, 0, "", ""},
		{"slow exit 0, not reaping", exited(0), time.Minute, false, "Always", 0, false, exitRestart, 0, "", ""},
		{"crash leaving processes: not a daemon", exited(1), 5 * time.Millisecond, false, "Always", 1, true, exitRestart, 0, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := decideExit(tc.status, tc.ranFor, tc.terminating, tc.restart, tc.adopted, tc.reaping)
			if d.action != tc.want || d.code != tc.code {
				t.Errorf("action %d code %d, want %d %d", d.action, d.code, tc.want, tc.code)
			}
			if !strings.Contains(d.note, tc.note) || (tc.note == "") != (d.note == "") {
				t.Errorf("note = %q, want %q", d.note, tc.note)
			}
			if !strings.Contains(d.why, tc.why) || (tc.why == "") != (d.why == "") {
				t.Errorf("why = %q, want %q", d.why, tc.why)
			}
		})
	}
}

func TestDecideBackoff(t *testing.T) {
	const first, longest = time.Second, 30 * time.Second
	for _, tc := range []struct{ delay, ranFor, now, next time.Duration }{
		{first, 0, first, 2 * first},                                     // the first restart
		{4 * time.Second, time.Second, 4 * time.Second, 8 * time.Second}, // doubling after a quick failure
		{16 * time.Second, time.Second, 16 * time.Second, longest},       // up to the longest
		{longest, time.Second, longest, longest},
		{longest, longest, first, 2 * first}, // a run as long as the longest starts over
		{8 * time.Second, time.Hour, first, 2 * first},
	} {
		now, next := decideBackoff(tc.delay, tc.ranFor, first, longest)
		if now != tc.now || next != tc.next {
			t.Errorf("decideBackoff(%s, ran %s) = %s, %s; want %s, %s", tc.delay, tc.ranFor, now, next, tc.now, tc.next)
		}
	}
}
