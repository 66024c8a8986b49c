package procinfo

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
)

func TestSelf(t *testing.T) {
	if !Alive(os.Getpid()) {
		t.Error("Alive(self) = false")
	}
	if rss, err := StatusValue(os.Getpid(), "VmRSS"); err != nil || rss <= 0 {
		t.Errorf("VmRSS = %d, %v", rss, err)
	}
	if _, err := StatusValue(os.Getpid(), "NoSuchKey"); err == nil {
		t.Error("want an error for a missing key")
	}
	if ContextSwitches(os.Getpid()) <= 0 {
		t.Error("no context switches counted")
	}
	args, err := Cmdline(os.Getpid())
	if err != nil || !slices.Equal(args, os.Args) {
		t.Errorf("Cmdline = %q, %v; want %q", args, err, os.Args)
	}
}

// A child is found by its command line.
func TestMatching(t *testing.T) {
	marker := "procinfo-test-" + t.Name()
	cmd := exec.Command("sh", "-c", "sleep 60", marker)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	if m := Matching(marker); len(m) != 1 || m[0].PID != cmd.Process.Pid {
		t.Errorf("Matching(%q) = %+v, want the shell %d", marker, m, cmd.Process.Pid)
	}
	if !strings.Contains(Describe(cmd.Process.Pid), marker) {
		t.Errorf("Describe = %q", Describe(cmd.Process.Pid))
	}
}

func TestParseSignal(t *testing.T) {
	forwarded := []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}
	for _, name := range []string{"TERM", "SIGTERM", "term", " sigterm "} {
		if sig, err := ParseSignal(name, forwarded); err != nil || sig != syscall.SIGTERM {
			t.Errorf("%q: %v %v", name, sig, err)
		}
	}
	if _, err := ParseSignal("URG", forwarded); err == nil {
		t.Error("URG accepted as a forwarded signal")
	}
}
