package procfs

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	// A command name may hold spaces and parentheses; only the last ")"
	// ends it. Fields from proc(5): 4 ppid, 5 pgrp, 14 utime, 15 stime,
	// 22 starttime.
	line := "4128 (a) b (c) Z 1 4123 3413 0 -1 4227084 97 0 1 0 17 5 0 0 20 0 1 0 286255 0 0\n"
	st, err := ParseStat(4128, []byte(line))
	if err != nil {
		t.Fatal(err)
	}
	want := Stat{PID: 4128, State: 'Z', PPID: 1, PGRP: 4123, UTime: 17, STime: 5, StartTime: 286255}
	if st != want || !st.Zombie() {
		t.Errorf("got %+v, want %+v", st, want)
	}
	if f := Fields([]byte(line)); len(f) < 3 || f[0] != "Z" || f[2] != "4123" {
		t.Errorf("Fields = %q", f)
	}
	if f := Fields([]byte("12 x S 1")); f != nil {
		t.Errorf("Fields without a command name = %q, want nothing", f)
	}
	for _, bad := range []string{"", "12 (x", "12 (x) S 1 2 3", "12 (x) S one 2 3 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0 0"} {
		if _, err := ParseStat(12, []byte(bad)); err == nil || !strings.Contains(err.Error(), "/proc/12/stat") {
			t.Errorf("ParseStat(%q) = %v, want an error naming the file", bad, err)
		}
	}
}

func TestSelf(t *testing.T) {
	st, err := ReadStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st.PPID != os.Getppid() || st.PGRP != syscall.Getpgrp() || !Running(st.PID, st.StartTime) || Running(st.PID, st.StartTime+1) {
		t.Errorf("ReadStat(self) = %+v", st)
	}
}

// A child and its grandchild are found from the test process.
func TestTree(t *testing.T) {
	marker := "procfs-test-" + t.Name()
	cmd := exec.Command("sh", "-c", "sleep 60 & wait", marker)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, pid := range Descendants(cmd.Process.Pid) {
			if p, err := os.FindProcess(pid); err == nil {
				p.Kill()
			}
		}
		cmd.Process.Kill()
		cmd.Wait()
	})
	var grandchild int
	deadline := time.Now().Add(30 * time.Second)
	for grandchild == 0 {
		if time.Now().After(deadline) {
			t.Fatal("sleep did not show up as the shell's child within 30s")
		}
		if c := Children(cmd.Process.Pid); len(c) == 1 {
			grandchild = c[0].PID
		}
		time.Sleep(5 * time.Millisecond)
	}
	if d := Descendants(os.Getpid()); !slices.Contains(d, cmd.Process.Pid) || !slices.Contains(d, grandchild) ||
		slices.Index(d, cmd.Process.Pid) > slices.Index(d, grandchild) {
		t.Errorf("Descendants(self) = %v, want %d before %d", d, cmd.Process.Pid, grandchild)
	}
}
