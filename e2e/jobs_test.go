//go:build e2e

// long because a test's namespace (space) and its
// Job and Pod waits are one piece, read together.

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// space is a test's own namespace, with recorders of its Jobs and Pods
// started before anything is created in it.
type space struct {
	t    *testing.T
	ns   string
	ctx  context.Context
	jobs *recorder[*batchv1.Job]
	pods *recorder[*corev1.Pod]
}

// newSpace creates a namespace for the test. When the test ends it logs
// the test's time (E2E_TIMING), and deletes the namespace, waiting until
// every process of its Pods is gone; if the test failed it first prints
// what `kubectl describe`, events and logs show.
func newSpace(t *testing.T, prefix string, labels ...map[string]string) *space {
	t.Helper()
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	ns, err := kube.CreateNamespace(ctx, prefix, labels...)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	s := &space{t: t, ns: ns, ctx: ctx, jobs: jobRecorder(ns), pods: podRecorder(ns)}
	t.Cleanup(func() {
		defer cancel()
		defer func() {
			logf("E2E_TIMING phase=test name=%s seconds=%.1f failed=%v", t.Name(), time.Since(began).Seconds(), t.Failed())
		}()
		s.jobs.stop()
		s.pods.stop()
		if t.Failed() {
			t.Logf("namespace %s:\n%s", ns, kube.Report(ctx, ns))
			if keep {
				t.Logf("E2E_KEEP is set: namespace %s is left as it is", ns)
				return
			}
		}
		if err := kube.DeleteNamespace(ctx, ns); err != nil {
			t.Errorf("cleaning up: %v", err)
		}
	})
	return s
}

// createJob creates a Job in the test's namespace and returns it with the
// moment just before the request.
func (s *space) createJob(job *batchv1.Job) (*batchv1.Job, time.Time) {
	s.t.Helper()
	at := time.Now()
	created, err := kube.Client().BatchV1().Jobs(s.ns).Create(s.ctx, job, metav1.CreateOptions{})
	if err != nil {
		s.t.Fatalf("create Job %s: %v", job.Name, err)
	}
	return created, at
}

// verdict is how a Job is expected to end: its condition and reason, its
// succeeded and failed counts, and how many Pods it had.
type verdict struct {
	cond              batchv1.JobConditionType
	reason            string
	succeeded, failed int32
	pods              int
}

var completeWithOnePod = verdict{batchv1.JobComplete, batchv1.JobReasonCompletionsReached, 1, 0, 1}

func failedWithOnePod(reason string) verdict { return verdict{batchv1.JobFailed, reason, 0, 1, 1} }

// run creates the Job, waits until it is finished, checks the verdict, and
// returns the Job as the watch first delivered it finished and the last
// status of each of its Pods.
func (s *space) run(job *batchv1.Job, want verdict, timeout time.Duration) (*batchv1.Job, []*corev1.Pod) {
	s.t.Helper()
	created, _ := s.createJob(job)
	done, _ := s.waitJob(created.Name, timeout)
	expectJob(s.t, done, want.cond, want.reason, want.succeeded, want.failed)
	return done, s.jobPods(done, want.pods)
}

// jobCondition is the Job's condition of that type if it is True.
func jobCondition(job *batchv1.Job, typ batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range job.Status.Conditions {
		if c := &job.Status.Conditions[i]; c.Type == typ && c.Status == corev1.ConditionTrue {
			return c
		}
	}
	return nil
}

func jobFinished(job *batchv1.Job) bool {
	return jobCondition(job, batchv1.JobComplete) != nil || jobCondition(job, batchv1.JobFailed) != nil
}

func jobSummary(job *batchv1.Job) string {
	var conds []string
	for _, c := range job.Status.Conditions {
		conds = append(conds, fmt.Sprintf("%s=%s(%s)", c.Type, c.Status, c.Reason))
	}
	return fmt.Sprintf("Job %s: active %d, succeeded %d, failed %d, conditions %v",
		job.Name, job.Status.Active, job.Status.Succeeded, job.Status.Failed, conds)
}

// waitJob waits until the named Job is Complete or Failed and returns
// the first version the watch delivered in that state, with its time.
func (s *space) waitJob(name string, timeout time.Duration) (*batchv1.Job, time.Time) {
	s.t.Helper()
	var found observation[*batchv1.Job]
	err := s.jobs.waitFor(timeout, func(all []observation[*batchv1.Job]) (bool, string) {
		for _, o := range all {
			if o.obj.Name != name {
				continue
			}
			if first, ok := s.jobs.first(o.obj.UID, jobFinished); ok {
				found = first
				return true, ""
			}
			return false, jobSummary(o.obj)
		}
		return false, "no Job " + name + " yet"
	})
	if err != nil {
		s.t.Fatalf("waiting for Job %s to finish: %v", name, err)
	}
	return found.obj, found.at
}

// expectJob checks that the Job ended with the condition type and reason
// (Complete or Failed), and its succeeded and failed counts.
func expectJob(t *testing.T, job *batchv1.Job, typ batchv1.JobConditionType, reason string, succeeded, failed int32) {
	t.Helper()
	if typ == batchv1.JobComplete {
		reason = completeReason()
	}
	c := jobCondition(job, typ)
	if c == nil || c.Reason != reason {
		t.Fatalf("want condition %s with reason %q; %s", typ, reason, jobSummary(job))
	}
	if job.Status.Succeeded != succeeded || job.Status.Failed != failed {
		t.Errorf("want succeeded %d, failed %d; %s", succeeded, failed, jobSummary(job))
	}
	if !kube.Features().JobVerdictFirst {
		return
	}
	// The controller first records the verdict (SuccessCriteriaMet,
	// FailureTarget), then the terminal condition once every Pod has ended.
	interim := map[batchv1.JobConditionType]batchv1.JobConditionType{
		batchv1.JobComplete: batchv1.JobSuccessCriteriaMet, batchv1.JobFailed: batchv1.JobFailureTarget}[typ]
	if first := jobCondition(job, interim); first == nil || first.Reason != reason {
		t.Errorf("want condition %s with reason %s before %s; %s", interim, reason, typ, jobSummary(job))
	}
}

// jobPods returns the last version of every Pod the Job ever had, in the
// order they were created, after waiting until each is terminal (Succeeded
// or Failed) or deleted.
func (s *space) jobPods(job *batchv1.Job, want int) []*corev1.Pod {
	s.t.Helper()
	var pods []*corev1.Pod
	err := s.pods.waitFor(2*time.Minute, func(all []observation[*corev1.Pod]) (bool, string) {
		pods = pods[:0]
		for _, o := range all {
			if !metav1.IsControlledBy(o.obj, job) {
				continue
			}
			if !podTerminal(o.obj) && !o.deleted {
				return false, fmt.Sprintf("Pod %s: %s", o.obj.Name, podSummary(o.obj))
			}
			pods = append(pods, o.obj)
		}
		return len(pods) == want, fmt.Sprintf("%d Pods, want %d", len(pods), want)
	})
	if err != nil {
		s.t.Fatalf("Pods of Job %s: %v", job.Name, err)
	}
	return pods
}

func podTerminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// containerStatus finds a container's status, init or regular, by name.
func containerStatus(p *corev1.Pod, name string) *corev1.ContainerStatus {
	for _, list := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

// podSummary is one line per container, for failure messages.
func podSummary(p *corev1.Pod) string {
	var b strings.Builder
	fmt.Fprintf(&b, "phase %s %s", p.Status.Phase, p.Status.Reason)
	for _, list := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for _, c := range list {
			fmt.Fprintf(&b, "\n  %s: restarts %d, ", c.Name, c.RestartCount)
			switch s := c.State; {
			case s.Terminated != nil:
				fmt.Fprintf(&b, "terminated %s exit %d signal %d message %q", s.Terminated.Reason, s.Terminated.ExitCode, s.Terminated.Signal, s.Terminated.Message)
			case s.Running != nil:
				fmt.Fprintf(&b, "running, ready %v", c.Ready)
			case s.Waiting != nil:
				fmt.Fprintf(&b, "waiting %s %s", s.Waiting.Reason, s.Waiting.Message)
			}
		}
	}
	return b.String()
}

// expectPhase checks the Pod's phase.
func expectPhase(t *testing.T, p *corev1.Pod, phase corev1.PodPhase) {
	t.Helper()
	if p.Status.Phase != phase {
		t.Fatalf("Pod %s: want phase %s, got %s", p.Name, phase, podSummary(p))
	}
}

// expectExits checks every container of the Pod, init containers
// included: each has terminated, with the exit code given for it or else
// 0; job-signal's and sidecar-watch's termination messages say so too,
// except for the containers named in killed (their wrapper was killed).
func expectExits(t *testing.T, p *corev1.Pod, codes map[string]int32, killed ...string) {
	t.Helper()
	for _, list := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for _, c := range list {
			want := codes[c.Name]
			st := containerStatus(p, c.Name)
			if st == nil || st.State.Terminated == nil {
				t.Errorf("Pod %s: container %s has not terminated: %s", p.Name, c.Name, podSummary(p))
				continue
			}
			term := st.State.Terminated
			if term.ExitCode != want {
				t.Errorf("Pod %s: container %s exited %d, want %d: %s", p.Name, c.Name, term.ExitCode, want, podSummary(p))
			}
			if slices.Contains(killed, c.Name) {
				continue
			}
			switch wrapper(c) {
			case "job-signal":
				if w := fmt.Sprintf("exit code %d", want); !strings.Contains(term.Message, w) {
					t.Errorf("Pod %s: container %s: termination message %q does not say %q", p.Name, c.Name, term.Message, w)
				}
			case "sidecar-watch":
				if w := "sidecar-watch: " + c.Name + " stopped"; !strings.Contains(term.Message, w) {
					t.Errorf("Pod %s: container %s: termination message %q does not say %q", p.Name, c.Name, term.Message, w)
				}
			}
		}
	}
}

// wrapper is "job-signal" or "sidecar-watch" if the container runs under
// one of them (not the install init container), else "".
func wrapper(c corev1.Container) string {
	if len(c.Command) == 0 || (len(c.Command) > 1 && c.Command[1] == "install") {
		return ""
	}
	switch base := c.Command[0][strings.LastIndex(c.Command[0], "/")+1:]; base {
	case "job-signal", "sidecar-watch":
		return base
	}
	return ""
}

// logs returns a container's log through the API (kubectl logs).
func (s *space) logs(pod, container string) string {
	s.t.Helper()
	b, err := kube.Client().CoreV1().Pods(s.ns).GetLogs(pod, &corev1.PodLogOptions{Container: container}).DoRaw(s.ctx)
	if err != nil {
		s.t.Fatalf("logs of %s/%s: %v", pod, container, err)
	}
	return string(b)
}

func expectLog(t *testing.T, s *space, pod, container, text string) {
	t.Helper()
	if log := s.logs(pod, container); !strings.Contains(log, text) {
		t.Errorf("container %s did not log %q; its log:\n%s", container, text, log)
	}
}

// run runs a command within timeout; the error carries its output.
func run(timeout time.Duration, argv ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s: %w\n%s", strings.Join(argv, " "), err, out)
	}
	return string(out), nil
}
