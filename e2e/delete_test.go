//go:build e2e

package e2e

import (
	"context"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestDeletePodWhileMainRuns: `kubectl delete pod` (graceful,
// through the API) while main runs. The kubelet sends TERM to every
// container at once; job-signal passes it to main, which finishes (exit 0);
// the sidecars keep serving until then and stop in order (agent, then proxy
// with --stop-after), all within terminationGracePeriodSeconds. The Pod ends
// Succeeded. What the Job controller makes of that depends on
// podReplacementPolicy:
//
//   - unset (TerminatingOrFailed, the default without a podFailurePolicy):
//     a Pod deleted before it Succeeded counts as failed, at the moment of
//     deletion, even though it then ends Succeeded: with backoffLimit 0 the
//     Job fails (BackoffLimitExceeded). The moment is the controller's
//     first sync after the deletion (its batch period, then its queue), so
//     main takes mainWindDown to finish after TERM: a controller that syncs
//     only once the Pod has Succeeded counts it succeeded.
//   - Failed: the controller waits for the Pod's terminal phase and counts
//     what it is; the Pod Succeeded, so the Job is Complete.
func TestDeletePodWhileMainRuns(t *testing.T) {
	const mainWindDown = 5 // seconds main takes after TERM
	t.Parallel()
	for _, tc := range []struct {
		name        string
		replacement batchv1.PodReplacementPolicy
		want        batchv1.JobConditionType
		reason      string
		succ, fail  int32
	}{
		{"default-replacement-policy", "", batchv1.JobFailed, batchv1.JobReasonBackoffLimitExceeded, 0, 1},
		{"replacement-policy-failed", batchv1.Failed, batchv1.JobComplete, batchv1.JobReasonCompletionsReached, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newSpace(t, "delete-pod")
			const grace = 20 // seconds; well above mainWindDown and the sidecars' stop
			w := wrapped{
				name:  "deleted",
				grace: grace,
				main: []string{"sh", "-c", `trap 'echo main got TERM; sleep ` + strconv.Itoa(mainWindDown) + `; echo main exiting; exit 0' TERM; ` +
					`echo main working; while true; do sleep 1 & wait $!; done`},
				sidecars: []sidecar{
					{name: "proxy", flags: []string{"--stop-after=agent"}, command: []string{"sh", "-c", termSidecar}},
					{name: "agent", command: []string{"sh", "-c", termSidecar}},
				},
			}
			job := w.job()
			if tc.replacement != "" {
				job.Spec.PodReplacementPolicy = ptr.To(tc.replacement)
			}
			created, _ := s.createJob(job)
			pod := s.waitMainLogged(created, "main working")
			// Follow every container's log before the Pod goes: once the
			// controller has counted it, the Pod and its logs are gone.
			logs := s.followLogs(pod, "main", "proxy", "agent")
			deleted := time.Now()
			if err := kube.Client().CoreV1().Pods(s.ns).Delete(s.ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
				t.Fatalf("delete Pod: %v", err)
			}
			done, _ := s.waitJob(created.Name, 2*time.Minute)
			expectJob(t, done, tc.want, tc.reason, tc.succ, tc.fail)
			pods := s.jobPods(done, 1) // and no replacement
			final := pods[0]
			expectPhase(t, final, corev1.PodSucceeded)
			expectExits(t, final, nil)
			for _, c := range final.Status.ContainerStatuses {
				if end := c.State.Terminated.FinishedAt.Time; end.Sub(deleted) > grace*time.Second {
					t.Errorf("container %s finished %v after the deletion, beyond the grace period of %d s", c.Name, end.Sub(deleted), grace)
				}
			}
			got := logs.wait(t)
			checkStopOrder(t, got)
			if t.Failed() {
				for name, text := range got {
					t.Logf("----- log of %s, followed until the Pod was gone:\n%s", name, text)
				}
			}
		})
	}
}

// checkStopOrder: main got TERM through job-signal and finished; each
// sidecar kept serving through the Pod's termination and was stopped
// because main was done; the proxy only after the agent had stopped.
func checkStopOrder(t *testing.T, logs map[string]string) {
	t.Helper()
	for _, text := range []string{"main got TERM", "main exiting"} {
		if !strings.Contains(logs["main"], text) {
			t.Errorf("main did not log %q; its log:\n%s", text, logs["main"])
		}
	}
	forwarded := false
	for _, ev := range slogEvents(logs["main"]) {
		forwarded = forwarded || (ev.msg == msgForwarded && strings.Contains(ev.fields["signal"], "TERM"))
	}
	if !forwarded {
		t.Errorf("job-signal did not log that it forwarded TERM; its log:\n%s", logs["main"])
	}
	eventTime(t, "main", logs["main"], msgDoneMarker)
	for _, name := range []string{"proxy", "agent"} {
		eventTime(t, name, logs[name], msgPodTerminating)
		// The sidecar outlived main: it was stopped because main was done
		// (the done marker), not by the kubelet's TERM.
		for _, ev := range slogEvents(logs[name]) {
			if ev.msg == msgStopping && !strings.HasPrefix(ev.fields["why"], "job done") {
				t.Errorf("%s was stopped %q, want because the job was done", name, ev.fields["why"])
			}
		}
		eventTime(t, name, logs[name], msgStopping)
	}
	agentStopped := eventTime(t, "agent", logs["agent"], msgSidecarStopped, msgSidecarKilled)
	proxyStop := eventTime(t, "proxy", logs["proxy"], msgSentStopSignal)
	if proxyStop.Before(agentStopped) {
		t.Errorf("the proxy was stopped at %s, before the agent had stopped at %s", proxyStop.Format(time.StampMilli), agentStopped.Format(time.StampMilli))
	}
}

// followedLogs are container logs streamed through the API (kubectl logs
// -f) until each container ends.
type followedLogs struct {
	wg   sync.WaitGroup
	mu   sync.Mutex
	text map[string]string
	errs []error
}

func (s *space) followLogs(pod *corev1.Pod, containers ...string) *followedLogs {
	f := &followedLogs{text: map[string]string{}}
	for _, name := range containers {
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			ctx, cancel := context.WithTimeout(s.ctx, 3*time.Minute)
			defer cancel()
			stream, err := kube.Client().CoreV1().Pods(s.ns).GetLogs(pod.Name, &corev1.PodLogOptions{Container: name, Follow: true}).Stream(ctx)
			var b []byte
			if err == nil {
				b, err = io.ReadAll(stream)
				stream.Close()
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			f.text[name] = string(b)
			if err != nil {
				f.errs = append(f.errs, err)
			}
		}()
	}
	return f
}

// wait returns the logs once every stream has ended.
func (f *followedLogs) wait(t *testing.T) map[string]string {
	t.Helper()
	f.wg.Wait()
	for _, err := range f.errs {
		t.Errorf("following a log: %v", err)
	}
	return f.text
}
