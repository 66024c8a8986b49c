//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"
)

// The kubelet's own behaviour, without job-signal: the bug the project
// fixes (a classic sidecar keeps a finished Job's Pod running) and the
// native sidecar it is compared with.

// A sidecar that stops at once on SIGTERM: "sleep & wait" lets the trap run
// as soon as the signal comes (as PID 1, sleep alone would ignore it).
const termSidecar = `trap 'echo sidecar stopping; exit 0' TERM; echo sidecar up; sleep 3600 & wait`

// A job that works a little; its last line marks the moment it ends.
const shortJob = `echo job working; sleep 2; echo job done`

func baselinePod(native bool) string {
	sidecar := fmt.Sprintf(`
  - name: sidecar
    image: %s
    imagePullPolicy: Never
    command: [sh, -c, %q]`, busyboxImage, termSidecar)
	init, extra := "", ""
	name := "classic-sidecar"
	if native {
		init, name = "  initContainers:"+sidecar+"\n    restartPolicy: Always\n", "native-sidecar"
	} else {
		extra = sidecar
	}
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 10
%s  containers:
  - name: job
    image: %s
    imagePullPolicy: Never
    command: [sh, -c, %q]%s
`, name, init, busyboxImage, shortJob, extra)
}

// TestClassicSidecarKeepsPodRunning reproduces kubernetes#25908: the job
// ends, the sidecar does not, and the Pod never completes.
func TestClassicSidecarKeepsPodRunning(t *testing.T) {
	t.Parallel()
	sp := runPod(t, podYAML(t, baselinePod(false)))
	sp.waitFor(2*time.Minute, "the job to exit 0", func(p *pod) bool {
		c := p.container("job")
		return c != nil && c.State.Terminated != nil && c.State.Terminated.ExitCode == 0
	})
	// The bug is an absence (of completion), so it can only be shown over a
	// bounded time: the Pod must stay Running with its sidecar up for as
	// long as a wrapped Pod takes to complete several times over.
	const observe = 15 * time.Second
	for deadline := time.Now().Add(observe); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		p, err := sp.get()
		if err != nil {
			continue // the kubelet was busy: ask again
		}
		if p == nil {
			t.Fatal("the kubelet no longer lists the Pod")
		}
		if p.Status.Phase != "Running" || p.container("sidecar").State.Running == nil {
			t.Fatalf("want the Pod Running with its sidecar up, got %s", p.summary())
		}
	}
	t.Logf("job done, Pod still Running with its classic sidecar after %v (as expected: the bug)", observe)
}

// TestNativeSidecarPodSucceeds: the same workload with the sidecar as an
// init container with restartPolicy Always (Kubernetes 1.29+) completes.
func TestNativeSidecarPodSucceeds(t *testing.T) {
	sp := runPod(t, podYAML(t, baselinePod(true)))
	p, seen := sp.waitTerminal(2 * time.Minute)
	if p.Status.Phase != "Succeeded" {
		t.Fatalf("want Succeeded, got %s", p.summary())
	}
	expectExit(t, p, "job", 0)
	expectExit(t, p, "sidecar", 0)
	logExitToPhase(t, sp, p, seen, "native", "job")
}

// expectExit checks that a container terminated with the given exit code.
func expectExit(t *testing.T, p *pod, container string, code int) *terminated {
	t.Helper()
	c := p.container(container)
	if c == nil || c.State.Terminated == nil {
		t.Fatalf("container %s has not terminated: %s", container, p.summary())
	}
	if got := c.State.Terminated.ExitCode; got != code {
		t.Fatalf("container %s exited %d, want %d: %s", container, got, code, p.summary())
	}
	return c.State.Terminated
}

// logExitToPhase logs, in a line scripts can grep, how long after the job
// container exited the poll saw the Pod's terminal phase. The precise exit
// time is the runtime's (nanoseconds); the kubelet's finishedAt is only to
// the second and is logged alongside for reference.
func logExitToPhase(t *testing.T, sp *staticPod, p *pod, seen time.Time, variant, job string) time.Duration {
	t.Helper()
	term := expectExit(t, p, job, p.container(job).State.Terminated.ExitCode)
	coarse := seen.Sub(term.FinishedAt)
	containers, err := criContainers(sp.uid)
	if err != nil {
		t.Fatal(err)
	}
	var exited time.Time
	for _, c := range containers {
		if c.Name == job && c.FinishedAt > 0 {
			exited = time.Unix(0, c.FinishedAt)
		}
	}
	if exited.IsZero() {
		t.Fatalf("the runtime has no finished container %s in Pod %s", job, sp.uid)
	}
	d := seen.Sub(exited)
	t.Logf("E2E_TIMING variant=%s job_exit_to_%s_ms=%d finishedAt_based_ms=%d pod=%s",
		variant, p.Status.Phase, d.Milliseconds(), coarse.Milliseconds(), sp.name)
	return d
}
