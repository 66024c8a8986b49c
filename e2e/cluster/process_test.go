package cluster

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// TestOurProcesses: a process recognised by its command line is listed
// with that command line, and no longer once it is gone.
func TestOurProcesses(t *testing.T) {
	if _, err := trackingMount(); err != nil {
		t.Skipf("no cgroup v2 mount: %v", err)
	}
	p := paths{base: t.TempDir(), cache: t.TempDir(), cgroups: "job-signal-e2e-unit-test-absent"}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip(err)
	}
	data, err := os.ReadFile(sh)
	if err != nil {
		t.Fatal(err)
	}
	ours := filepath.Join(p.cache, "bin", "sh")
	if err := os.MkdirAll(filepath.Dir(ours), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ours, data, 0o755); err != nil {
		t.Fatal(err)
	}
	// $0 names a path under base, as every daemon of the suite does.
	cmd := exec.Command(ours, "-c", "cat >/dev/null", filepath.Join(p.base, "x"))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	want := process{cmd.Process.Pid, ours + " -c cat >/dev/null " + filepath.Join(p.base, "x")}
	procs, err := ourProcesses(p)
	if err != nil || !slices.Contains(procs, want) {
		t.Errorf("ourProcesses = %v, %v; want it to hold %v", procs, err, want)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	procs, err = ourProcesses(p)
	if err != nil || len(procs) != 0 {
		t.Errorf("after its exit, ourProcesses = %v, %v; want none", procs, err)
	}
}
