package fake

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantErr string
		check   func(*config) bool
	}{
		{args: nil, check: func(c *config) bool {
			return slices.Equal(c.stopSignals, []syscall.Signal{syscall.SIGTERM, syscall.SIGINT}) && c.onStop == "die" && !c.endsAtOnce()
		}},
		{args: []string{"-exit", "0"}, check: (*config).endsAtOnce},
		{args: []string{"-kill-self", "SIGHUP"}, check: func(c *config) bool { return c.killSelf == syscall.SIGHUP && c.endsAtOnce() }},
		{args: []string{"-exit", "3", "-run", "10ms"}, check: func(c *config) bool { return !c.endsAtOnce() && c.exitCode == 3 }},
		{args: []string{"-stop-signal", "usr1,KILL", "-on-stop", "exit:7"}, check: func(c *config) bool {
			return slices.Equal(c.stopSignals, []syscall.Signal{syscall.SIGUSR1, syscall.SIGKILL}) && c.stopCode == 7
		}},
		{args: []string{"-stop-signal", "ALRM"}, wantErr: "-stop-signal: unknown signal"},
		{args: []string{"-on-stop", "exit"}, wantErr: "want die, ignore or exit:N"},
		{args: []string{"-on-stop", "exit:256"}, wantErr: "want exit:N with N from 0 to 255"},
		{args: []string{"-quit", "later"}, wantErr: "-quit \"later\""},
		{args: []string{"-wait-file", "f", "-run", "1s"}, wantErr: "give one"},
		{args: []string{"-exit", "300"}, wantErr: "want 0 to 255"},
		{args: []string{"-touch"}, wantErr: "flag needs an argument"},
		{args: []string{"stray"}, wantErr: `unexpected argument "stray"`},
	} {
		c, err := parse(tc.args)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("parse(%q) = %v, want an error with %q", tc.args, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("parse(%q): %v", tc.args, err)
		case !tc.check(c):
			t.Errorf("parse(%q) = %+v", tc.args, c)
		}
	}
}

// The records the fake writes are read back by ReadEvents and ReadPIDs.
func TestRecords(t *testing.T) {
	dir := t.TempDir()
	events, pids := filepath.Join(dir, "events"), filepath.Join(dir, "pids")
	rec, err := openRecorder(events)
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	rec.add("start", "pid=1")
	rec.add("stop", "TERM")
	rec.add("exit", "code=0")
	rec.f.Close()
	// A record cut short by a SIGKILL is skipped.
	f, _ := os.OpenFile(events, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("exi")
	f.Close()
	got, err := ReadEvents(events)
	if err != nil || len(got) != 3 {
		t.Fatalf("ReadEvents = %+v, %v", got, err)
	}
	first, _ := got.First()
	last, _ := got.Last()
	if first.Before(before) || last.Before(first) || got[1].Kind != "stop" || got[1].Detail != "TERM" {
		t.Errorf("events %+v", got)
	}
	if stop, err := FirstOf(events, "stop"); err != nil || !stop.Equal(got[1].At) {
		t.Errorf("FirstOf(stop) = %v, %v", stop, err)
	}
	if _, err := FirstOf(events, "ready"); err == nil || !strings.Contains(err.Error(), `no "ready" event`) {
		t.Errorf("FirstOf(ready): %v", err)
	}
	if none, err := ReadEvents(filepath.Join(dir, "missing")); none != nil || err != nil {
		t.Errorf("missing file: %v, %v", none, err)
	}

	if err := registerPID(pids, "me", os.Getpid()); err != nil {
		t.Fatal(err)
	}
	recs, err := ReadPIDs(pids)
	if err != nil || len(recs) != 1 || recs[0].Name != "me" || recs[0].PID != os.Getpid() || !recs[0].Running() {
		t.Errorf("ReadPIDs = %+v, %v", recs, err)
	}
}
