//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The cases of issue 5, each a Pod run for real with job-signal and
// sidecar-watch from the image the Dockerfile builds.

func oneSidecarJob(name string, job string) wrapped {
	return wrapped{
		name:     name,
		job:      []string{"sh", "-c", job},
		sidecars: []sidecar{{name: "sidecar", command: []string{"sh", "-c", termSidecar}}},
	}
}

// expectWrappedExit checks a job-signal container's exit code and the
// termination message it wrote.
func expectWrappedExit(t *testing.T, p *pod, container string, code int) {
	t.Helper()
	term := expectExit(t, p, container, code)
	if want := fmt.Sprintf("exit code %d", code); !strings.Contains(term.Message, want) {
		t.Errorf("container %s: termination message %q does not say %q", container, term.Message, want)
	}
}

// expectSidecarsStopped checks that every sidecar-watch exited 0 and said
// so in its termination message, whatever its sidecar died of.
func expectSidecarsStopped(t *testing.T, p *pod, names ...string) {
	t.Helper()
	for _, name := range names {
		term := expectExit(t, p, name, 0)
		if want := "sidecar-watch: " + name + " stopped"; !strings.Contains(term.Message, want) {
			t.Errorf("container %s: termination message %q does not say %q", name, term.Message, want)
		}
	}
}

// TestJobExitToSucceededOursVsNative is the success case, timed: the same
// job and sidecar, wrapped by job-signal and sidecar-watch or as a native
// sidecar, in turns on the same kubelet. It logs, for each run and as
// medians, the time from the job container's exit to the poll seeing the
// Pod Succeeded.
func TestJobExitToSucceededOursVsNative(t *testing.T) {
	needProduct(t)
	// make bench asks for more rounds (E2E_TIMING_ROUNDS) for a stable
	// median; three keep make e2e short.
	rounds := 3
	if n, err := strconv.Atoi(os.Getenv("E2E_TIMING_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	var ours, native []time.Duration
	for i := 1; i <= rounds; i++ {
		t.Run(fmt.Sprintf("ours-%d", i), func(t *testing.T) {
			sp := runPod(t, oneSidecarJob("ours-success", shortJob).pod())
			p, seen := sp.waitTerminal(2 * time.Minute)
			if p.Status.Phase != "Succeeded" {
				t.Fatalf("want Succeeded, got %s", p.summary())
			}
			expectExit(t, p, "job-signal-install", 0)
			expectWrappedExit(t, p, "job", 0)
			expectSidecarsStopped(t, p, "sidecar")
			ours = append(ours, logExitToPhase(t, sp, p, seen, "ours", "job"))
		})
		t.Run(fmt.Sprintf("native-%d", i), func(t *testing.T) {
			sp := runPod(t, podYAML(t, baselinePod(true)))
			p, seen := sp.waitTerminal(2 * time.Minute)
			if p.Status.Phase != "Succeeded" {
				t.Fatalf("want Succeeded, got %s", p.summary())
			}
			expectExit(t, p, "job", 0)
			native = append(native, logExitToPhase(t, sp, p, seen, "native", "job"))
		})
	}
	if len(ours) == rounds && len(native) == rounds {
		t.Logf("E2E_TIMING compare job_exit_to_Succeeded ours_median_ms=%d native_median_ms=%d rounds=%d ours_ms=%v native_ms=%v",
			median(ours).Milliseconds(), median(native).Milliseconds(), rounds, millis(ours), millis(native))
	}
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func millis(ds []time.Duration) []int64 {
	var out []int64
	for _, d := range ds {
		out = append(out, d.Milliseconds())
	}
	return out
}

// TestJobFailure: the job fails; the Pod is Failed with the job's exit
// code, and the sidecar was still stopped cleanly (exit 0).
func TestJobFailure(t *testing.T) {
	t.Parallel()
	needProduct(t)
	sp := runPod(t, oneSidecarJob("job-failure", `echo failing; exit 3`).pod())
	p, _ := sp.waitTerminal(2 * time.Minute)
	if p.Status.Phase != "Failed" {
		t.Fatalf("want Failed, got %s", p.summary())
	}
	expectWrappedExit(t, p, "job", 3)
	expectSidecarsStopped(t, p, "sidecar")
}

// TestSidecarIgnoringSIGTERM: a sidecar that ignores SIGTERM is killed
// after --grace, and the Pod still completes promptly.
func TestSidecarIgnoringSIGTERM(t *testing.T) {
	t.Parallel()
	needProduct(t)
	w := oneSidecarJob("ignores-sigterm", shortJob)
	w.sidecars[0].flags = []string{"--grace=2s"}
	// Ignored, SIGTERM stays ignored in the shell's children (sleep).
	w.sidecars[0].command = []string{"sh", "-c", `trap '' TERM; echo ignoring SIGTERM; while true; do sleep 1; done`}
	sp := runPod(t, w.pod())
	p, seen := sp.waitTerminal(2 * time.Minute)
	if p.Status.Phase != "Succeeded" {
		t.Fatalf("want Succeeded, got %s", p.summary())
	}
	expectWrappedExit(t, p, "job", 0)
	expectSidecarsStopped(t, p, "sidecar")
	d := logExitToPhase(t, sp, p, seen, "ours-sigterm-ignored", "job")
	if limit := 2*time.Second + 8*time.Second; d > limit {
		t.Errorf("the Pod completed %v after the job exited; want at most --grace plus %v", d, limit-2*time.Second)
	}
}

// TestJobContainerSIGKILLed: the job's whole container is SIGKILLed from
// outside (as the OOM killer or a node agent would), job-signal included,
// so it writes no done marker. The sidecars learn it from the lock the
// kernel released, and stop; the Pod ends Failed.
func TestJobContainerSIGKILLed(t *testing.T) {
	t.Parallel()
	needProduct(t)
	w := wrapped{
		name: "job-sigkilled",
		job:  []string{"sh", "-c", "echo job working; sleep 3600"},
		sidecars: []sidecar{
			{name: "handles-term", command: []string{"sh", "-c", termSidecar}},
			{name: "plain-sleep", command: []string{"sleep", "3600"}},
		},
	}
	sp := runPod(t, w.pod())
	sp.waitFor(2*time.Minute, "the job's command to run", func(p *pod) bool {
		return strings.Contains(sp.logText("job"), "job working")
	})
	killed := killContainer(t, sp, "job")
	p, seen := sp.waitTerminal(time.Minute)
	if p.Status.Phase != "Failed" {
		t.Fatalf("want Failed, got %s", p.summary())
	}
	expectExit(t, p, "job", 137)
	expectSidecarsStopped(t, p, "handles-term", "plain-sleep")
	t.Logf("E2E_TIMING variant=ours-job-sigkilled kill_to_Failed_ms=%d", seen.Sub(killed).Milliseconds())
}

// killContainer SIGKILLs every process of a running container, found in
// its cgroup (named after its runtime ID, inside the Pod's cgroup).
func killContainer(t *testing.T, sp *staticPod, name string) time.Time {
	t.Helper()
	containers, err := criContainers(sp.uid)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range containers {
		if c.Name != name || c.State != "CONTAINER_RUNNING" {
			continue
		}
		cg, err := findCgroup(env.cgroups+"/pods", c.ID)
		if err != nil || cg == "" {
			t.Fatalf("no cgroup for container %s (%s): %v", name, c.ID, err)
		}
		pids, err := cgroupPids(cg)
		if err != nil || len(pids) == 0 {
			t.Fatalf("no process in %s: %v", cg, err)
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Logf("SIGKILLed container %s: processes %v", name, pids)
		return time.Now()
	}
	t.Fatalf("container %s is not running in Pod %s", name, sp.name)
	return time.Time{}
}

// TestJobOOMKilled: the job's command runs out of memory under the
// container's limit and the kernel kills it; job-signal reports 137 and
// the sidecar still stops.
func TestJobOOMKilled(t *testing.T) {
	t.Parallel()
	needProduct(t)
	// tail holds a whole "line" in memory, and /dev/zero has no newline.
	w := oneSidecarJob("job-oom", `echo allocating; head -c 1073741824 /dev/zero | tail`)
	w.jobLimits = map[string]any{"memory": "64Mi"}
	sp := runPod(t, w.pod())
	p, _ := sp.waitTerminal(2 * time.Minute)
	if p.Status.Phase != "Failed" {
		t.Fatalf("want Failed, got %s", p.summary())
	}
	expectWrappedExit(t, p, "job", 137)
	expectSidecarsStopped(t, p, "sidecar")
	t.Logf("job container: reason %q, message %q", p.container("job").State.Terminated.Reason, p.container("job").State.Terminated.Message)
}

// TestSidecarStopSignal: a sidecar that stops only on SIGINT is stopped
// with --stop-signal INT at once, not after --grace.
func TestSidecarStopSignal(t *testing.T) {
	t.Parallel()
	needProduct(t)
	w := oneSidecarJob("stop-signal", shortJob)
	w.sidecars[0].flags = []string{"--stop-signal=INT", "--grace=20s"}
	w.sidecars[0].command = []string{"sh", "-c", `trap '' TERM; trap 'echo got INT; exit 0' INT; while true; do sleep 1; done`}
	sp := runPod(t, w.pod())
	p, seen := sp.waitTerminal(2 * time.Minute)
	if p.Status.Phase != "Succeeded" {
		t.Fatalf("want Succeeded, got %s", p.summary())
	}
	expectWrappedExit(t, p, "job", 0)
	expectSidecarsStopped(t, p, "sidecar")
	expectLog(t, sp, "sidecar", "got INT")
	if d := logExitToPhase(t, sp, p, seen, "ours-stop-signal-int", "job"); d > 10*time.Second {
		t.Errorf("the Pod completed %v after the job exited: the sidecar was not stopped by SIGINT", d)
	}
}
