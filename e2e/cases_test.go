//go:build e2e

package e2e

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// The Job controller's verdicts on Jobs wrapped by job-signal,
// each through the API: the Job's conditions and reasons, the Pods' phases
// and every container's exit code.

// TestMainFailsBackoffLimit: main exits 3 with backoffLimit 0. The
// Job fails with BackoffLimitExceeded; the sidecar was stopped cleanly
// (exit 0) and job-signal's termination message gives the code.
func TestMainFailsBackoffLimit(t *testing.T) {
	t.Parallel()
	s := newSpace(t, "backoff")
	_, pods := s.run(oneSidecar("fails", `echo failing; exit 3`).job(), failedWithOnePod(batchv1.JobReasonBackoffLimitExceeded), 3*time.Minute)
	expectPhase(t, pods[0], corev1.PodFailed)
	expectExits(t, pods[0], map[string]int32{"main": 3})
}

// podFailurePolicyJob fails the Job at once when main exits 42, and does
// not count a Pod whose main exits 43; it works only because job-signal
// exits with its command's code.
func podFailurePolicyJob(w wrapped) *batchv1.Job {
	job := w.job()
	job.Spec.BackoffLimit = ptr.To(int32(3))
	job.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{
		{Action: batchv1.PodFailurePolicyActionFailJob, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
			ContainerName: ptr.To("main"), Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}}},
		{Action: batchv1.PodFailurePolicyActionIgnore, OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{
			ContainerName: ptr.To("main"), Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{43}}},
	}}
	return job
}

// TestPodFailurePolicy.
func TestPodFailurePolicy(t *testing.T) {
	t.Parallel()
	t.Run("exit-42-fails-the-job", func(t *testing.T) {
		t.Parallel()
		s := newSpace(t, "pfp-failjob")
		_, pods := s.run(podFailurePolicyJob(oneSidecar("exit-42", `echo fatal; exit 42`)), failedWithOnePod(batchv1.JobReasonPodFailurePolicy), 3*time.Minute) // backoffLimit 3, yet no second Pod
		expectPhase(t, pods[0], corev1.PodFailed)
		expectExits(t, pods[0], map[string]int32{"main": 42})
	})
	t.Run("exit-43-is-ignored", func(t *testing.T) {
		t.Parallel()
		requireNodeProcesses(t, "a hostPath folder on the node, made here, remembers the first attempt")
		s := newSpace(t, "pfp-ignore")
		// The first Pod's main exits 43, the next one's 0: a folder on the
		// node (hostPath) remembers that a first attempt ran.
		shared, err := os.MkdirTemp("", "job-signal-e2e-attempts-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(shared) })
		if err := os.Chmod(shared, 0o777); err != nil {
			t.Fatal(err)
		}
		w := oneSidecar("exit-43", `if [ -e /attempts/first ]; then echo second attempt; exit 0; fi; touch /attempts/first; echo first attempt; exit 43`)
		w.volumes = []corev1.Volume{{Name: "attempts", VolumeSource: corev1.VolumeSource{
			HostPath: &corev1.HostPathVolumeSource{Path: shared, Type: ptr.To(corev1.HostPathDirectory)}}}}
		// Replaced and not counted: failed stays 0.
		_, pods := s.run(podFailurePolicyJob(w), verdict{batchv1.JobComplete, batchv1.JobReasonCompletionsReached, 1, 0, 2}, 3*time.Minute)
		expectPhase(t, pods[0], corev1.PodFailed)
		expectExits(t, pods[0], map[string]int32{"main": 43})
		expectPhase(t, pods[1], corev1.PodSucceeded)
		expectExits(t, pods[1], nil)
	})
}

// TestOnFailureRestartsMainInPlace: restartPolicy OnFailure and a
// main that fails twice, then succeeds. The kubelet restarts main in the
// same Pod; with --restart-policy OnFailure job-signal leaves the sidecar
// running across attempts (its restart count stays 0); the Job completes
// with one Pod.
func TestOnFailureRestartsMainInPlace(t *testing.T) {
	t.Parallel()
	s := newSpace(t, "onfailure")
	w := oneSidecar("on-failure", `n=$(cat /scratch/n 2>/dev/null || echo 0); n=$((n+1)); echo $n > /scratch/n; echo attempt $n; [ $n -ge 3 ]`)
	w.restartPolicy = corev1.RestartPolicyOnFailure
	w.mainFlags = []string{"--restart-policy=OnFailure"}
	w.volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	job := w.job()
	job.Spec.BackoffLimit = ptr.To(int32(3))
	_, pods := s.run(job, completeWithOnePod, 4*time.Minute)
	s.expectAttemptsInPlace(pods[0], 2, 1)
	expectLog(t, s, pods[0].Name, "main", "attempt 3")
}

// expectAttemptsInPlace: the Pod succeeded after main failed restarts
// times (the last failure with code lastFailure) in the same Pod, and the
// sidecar stayed up across the attempts: never restarted, and sidecar-watch
// said so once per failed attempt.
func (s *space) expectAttemptsInPlace(pod *corev1.Pod, restarts int32, lastFailure int32) {
	t := s.t
	t.Helper()
	expectPhase(t, pod, corev1.PodSucceeded)
	expectExits(t, pod, nil)
	if c := containerStatus(pod, "main"); c.RestartCount != restarts {
		t.Errorf("main restarted %d times, want %d: %s", c.RestartCount, restarts, podSummary(pod))
	}
	if !s.sawPreviousExit(pod, "main", lastFailure) {
		t.Errorf("the watch never showed main's previous attempt ending with exit code %d", lastFailure)
	}
	if c := containerStatus(pod, "sidecar"); c.RestartCount != 0 {
		t.Errorf("the sidecar restarted %d times, want 0: it must stay up across the main's attempts", c.RestartCount)
	}
	const stayedUp = "staying up for the next attempt"
	if log := s.logs(pod.Name, "sidecar"); strings.Count(log, stayedUp) != int(restarts) {
		t.Errorf("sidecar-watch logged %q %d times, want %d (one per failed attempt):\n%s", stayedUp, strings.Count(log, stayedUp), restarts, log)
	}
}

// TestOnFailureLivenessProbeRestart: under restartPolicy
// OnFailure a failed liveness probe makes the kubelet send TERM to the main
// container alone, then restart it. job-signal passes the TERM on and
// records the attempt as failed; the sidecar must take it for what it is,
// a failed attempt, and stay up for the next one (its restart count stays
// 0, no stop signal reaches it), instead of stopping as if the Pod were
// going away.
func TestOnFailureLivenessProbeRestart(t *testing.T) {
	t.Parallel()
	s := newSpace(t, "liveness")
	w := oneSidecar("liveness", `n=$(cat /scratch/n 2>/dev/null || echo 0); n=$((n+1)); echo $n > /scratch/n; echo attempt $n
if [ $n -ge 2 ]; then touch /scratch/alive; echo main done; exit 0; fi
trap 'echo main got TERM; exit 143' TERM; while true; do sleep 1 & wait $!; done`)
	w.restartPolicy = corev1.RestartPolicyOnFailure
	w.mainFlags = []string{"--restart-policy=OnFailure"}
	w.volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	job := w.job()
	job.Spec.BackoffLimit = ptr.To(int32(3))
	main := &job.Spec.Template.Spec.Containers[0]
	main.LivenessProbe = &corev1.Probe{
		ProbeHandler:        corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"cat", "/scratch/alive"}}},
		InitialDelaySeconds: 1, PeriodSeconds: 1, FailureThreshold: 1, TimeoutSeconds: 1,
	}
	_, pods := s.run(job, completeWithOnePod, 4*time.Minute)
	s.expectAttemptsInPlace(pods[0], 1, 143) // 143: the probe's TERM
	expectLog(t, s, pods[0].Name, "main", "main got TERM")
	sidecarLog := s.logs(pods[0].Name, "sidecar")
	stops := 0 // the sidecar's own line on TERM (its command, logged too, holds the words)
	for _, line := range strings.Split(sidecarLog, "\n") {
		if strings.TrimSpace(line) == "sidecar stopping" {
			stops++
		}
	}
	if strings.Contains(sidecarLog, "job done and Pod terminating") || stops != 1 {
		t.Errorf("the sidecar was stopped by the probe's TERM, or more than once:\n%s", sidecarLog)
	}
}

// TestActiveDeadline: activeDeadlineSeconds shorter than main. The
// Job fails with DeadlineExceeded, the controller deletes the Pod, every
// container stops (main by TERM through job-signal: 143) and nothing is
// left running on the node.
func TestActiveDeadline(t *testing.T) {
	t.Parallel()
	s := newSpace(t, "deadline")
	job := oneSidecar("deadline", `echo main working; while true; do sleep 1; done`).job()
	job.Spec.ActiveDeadlineSeconds = ptr.To(int64(8))
	_, pods := s.run(job, failedWithOnePod(batchv1.JobReasonDeadlineExceeded), 3*time.Minute)
	expectExits(t, pods[0], map[string]int32{"main": 143})
	s.expectPodsGone(2 * time.Minute)
}

// TestTTLAfterFinished: the controller deletes the finished Job
// and, with it, its Pod.
func TestTTLAfterFinished(t *testing.T) {
	t.Parallel()
	s := newSpace(t, "ttl")
	job := oneSidecar("ttl", shortMain).job()
	job.Spec.TTLSecondsAfterFinished = ptr.To(int32(3))
	_, pods := s.run(job, completeWithOnePod, 3*time.Minute)
	expectPhase(t, pods[0], corev1.PodSucceeded)
	expectExits(t, pods[0], nil)
	err := s.jobs.waitFor(time.Minute, func(all []observation[*batchv1.Job]) (bool, string) {
		return all[0].deleted, "the Job still exists: " + jobSummary(all[0].obj)
	})
	if err != nil {
		t.Fatal(err)
	}
	s.expectPodsGone(time.Minute)
}

// TestParallelJob: parallelism 3, completions 6, with a sidecar.
func TestParallelJob(t *testing.T) {
	t.Parallel()
	s := newSpace(t, "parallel")
	job := oneSidecar("parallel", shortMain).job()
	job.Spec.Parallelism, job.Spec.Completions = ptr.To(int32(3)), ptr.To(int32(6))
	_, pods := s.run(job, verdict{batchv1.JobComplete, batchv1.JobReasonCompletionsReached, 6, 0, 6}, 5*time.Minute)
	for _, p := range pods {
		expectPhase(t, p, corev1.PodSucceeded)
		expectExits(t, p, nil)
	}
}

// TestSidecarIgnoringSIGTERM: a sidecar that ignores SIGTERM is killed
// after --grace, and the Job still completes promptly.
func TestSidecarIgnoringSIGTERM(t *testing.T) {
	t.Parallel()
	s := newSpace(t, "ignores-term")
	w := oneSidecar("ignores-term", shortMain)
	w.sidecars[0].flags = []string{"--grace=2s"}
	// Ignored, SIGTERM stays ignored in the shell's children (sleep).
	w.sidecars[0].command = []string{"sh", "-c", `trap '' TERM; echo ignoring SIGTERM; while true; do sleep 1; done`}
	_, pods := s.run(w.job(), completeWithOnePod, 3*time.Minute)
	expectPhase(t, pods[0], corev1.PodSucceeded)
	expectExits(t, pods[0], nil)
	expectLog(t, s, pods[0].Name, "sidecar", "ignoring SIGTERM")
	if !strings.Contains(s.logs(pods[0].Name, "sidecar"), msgSidecarKilled) {
		t.Errorf("sidecar-watch did not log %q", msgSidecarKilled)
	}
}

// TestMainContainerSIGKILLed: the main container is SIGKILLed from outside
// (as the OOM killer or a node agent would), job-signal included, so it
// writes no done marker. The sidecars learn it from the lock the kernel
// released and stop; the Pod fails and so does the Job.
func TestMainContainerSIGKILLed(t *testing.T) {
	t.Parallel()
	requireNodeProcesses(t, "it SIGKILLs main's processes on the node, from outside the container")
	s := newSpace(t, "sigkill")
	w := oneSidecar("sigkilled", `echo main working; sleep 3600`)
	w.sidecars = append(w.sidecars, sidecar{name: "plain-sleep", command: []string{"sleep", "3600"}})
	created, _ := s.createJob(w.job())
	pod := s.waitMainLogged(created, "main working")
	var pids []int
	var err error
	if c := containerStatus(pod, "main"); c != nil {
		pids, err = kube.ContainerProcesses(c.ContainerID)
	}
	if err != nil || len(pids) == 0 {
		t.Fatalf("no process of container main to kill (%v): %s", err, podSummary(pod))
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	t.Logf("SIGKILLed container main: processes %v", pids)
	done, _ := s.waitJob(created.Name, 2*time.Minute)
	expectJob(t, done, batchv1.JobFailed, batchv1.JobReasonBackoffLimitExceeded, 0, 1)
	pods := s.jobPods(done, 1)
	expectPhase(t, pods[0], corev1.PodFailed)
	// job-signal was killed too: it wrote no termination message.
	expectExits(t, pods[0], map[string]int32{"main": 137}, "main")
}

// TestMainOOMKilled: the main command runs out of memory under the
// container's limit; job-signal reports 137 and the sidecar still stops.
func TestMainOOMKilled(t *testing.T) {
	t.Parallel()
	s := newSpace(t, "oom")
	// tail holds a whole "line" in memory, and /dev/zero has no newline.
	w := oneSidecar("oom", `echo allocating; head -c 1073741824 /dev/zero | tail`)
	w.mainLimits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}
	_, pods := s.run(w.job(), failedWithOnePod(batchv1.JobReasonBackoffLimitExceeded), 3*time.Minute)
	expectPhase(t, pods[0], corev1.PodFailed)
	expectExits(t, pods[0], map[string]int32{"main": 137})
}

// TestSidecarStopSignal: a sidecar that stops only on SIGINT is stopped
// with --stop-signal INT at once, not after --grace.
func TestSidecarStopSignal(t *testing.T) {
	t.Parallel()
	s := newSpace(t, "stop-signal")
	w := oneSidecar("stop-signal", shortMain)
	w.sidecars[0].flags = []string{"--stop-signal=INT", "--grace=60s"}
	w.sidecars[0].command = []string{"sh", "-c", `trap '' TERM; trap 'echo got INT; exit 0' INT; while true; do sleep 1; done`}
	w.grace = 90
	_, pods := s.run(w.job(), completeWithOnePod, 50*time.Second) // well before --grace would end it
	expectPhase(t, pods[0], corev1.PodSucceeded)
	expectExits(t, pods[0], nil)
	expectLog(t, s, pods[0].Name, "sidecar", "got INT")
}

// sawPreviousExit says whether the Pod watch ever showed container's
// previous attempt ending with code: the final status cannot, since the
// kubelet drops lastState once the Pod is terminal.
func (s *space) sawPreviousExit(pod *corev1.Pod, container string, code int32) bool {
	_, ok := s.pods.first(pod.UID, func(p *corev1.Pod) bool {
		c := containerStatus(p, container)
		return c != nil && c.LastTerminationState.Terminated != nil && c.LastTerminationState.Terminated.ExitCode == code
	})
	return ok
}
