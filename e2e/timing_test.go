//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// TestJobCompletionOursVsNative measures, on this cluster, the same
// one-sidecar Job wrapped by job-signal or with a native sidecar, in turns:
//
//   - main exit to Complete: from the main container's exit (the runtime's
//     nanosecond timestamp, through the CRI) to the watch delivering the
//     Job's Complete condition;
//   - creation to Complete: from just before the create request to the same
//     moment.
//
// It logs each run and one E2E_TIMING compare line per measurement, which
// make bench reads. Not parallel: the other tests wait until it is done.
func TestJobCompletionOursVsNative(t *testing.T) {
	rounds := 3 // make bench asks for more (E2E_TIMING_ROUNDS)
	if n, err := strconv.Atoi(os.Getenv("E2E_TIMING_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	s := newSpace(t, "timing")
	var exit, create [2][]time.Duration // [0] job-signal, [1] native
	for i := 1; i <= rounds; i++ {
		for v, variant := range []string{"ours", "native"} {
			job := oneSidecar(fmt.Sprintf("%s-%d", variant, i), shortMain).job()
			if variant == "native" {
				job = baselineJob(job.Name, true)
			}
			e, c := s.timeJob(job, variant)
			exit[v], create[v] = append(exit[v], e), append(create[v], c)
		}
	}
	for _, m := range []struct {
		name string
		d    [2][]time.Duration
	}{{"main_exit_to_Complete", exit}, {"create_to_Complete", create}} {
		t.Logf("E2E_TIMING compare %s ours_median_ms=%d native_median_ms=%d rounds=%d ours_ms=%v native_ms=%v",
			m.name, median(m.d[0]).Milliseconds(), median(m.d[1]).Milliseconds(), rounds, millis(m.d[0]), millis(m.d[1]))
	}
}

// timeJob runs one Job to Complete and returns main exit to Complete and
// creation to Complete.
func (s *space) timeJob(job *batchv1.Job, variant string) (exitToComplete, createToComplete time.Duration) {
	s.t.Helper()
	created, at := s.createJob(job)
	done, seen := s.waitJob(created.Name, 3*time.Minute)
	expectJob(s.t, done, batchv1.JobComplete, batchv1.JobReasonCompletionsReached, 1, 0)
	pods := s.jobPods(done, 1)
	expectPhase(s.t, pods[0], corev1.PodSucceeded)
	expectExits(s.t, pods[0], nil)
	containers, err := kube.CRIContainers(s.ctx, string(pods[0].UID))
	if err != nil {
		s.t.Fatal(err)
	}
	var exited, lastExit time.Time // main's exit, and the last container's
	for _, c := range containers {
		if c.Name == "main" && c.FinishedAt > 0 {
			exited = time.Unix(0, c.FinishedAt)
		}
		if end := time.Unix(0, c.FinishedAt); end.After(lastExit) {
			lastExit = end
		}
	}
	if exited.IsZero() {
		s.t.Fatalf("the runtime has no finished container main in Pod %s", pods[0].Name)
	}
	succeeded, _ := s.pods.first(pods[0].UID, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
	s.t.Logf("E2E_TIMING variant=%s main_exit_to_last_container_exit_ms=%d main_exit_to_Succeeded_ms=%d main_exit_to_Complete_ms=%d create_to_Complete_ms=%d job=%s",
		variant, lastExit.Sub(exited).Milliseconds(), succeeded.at.Sub(exited).Milliseconds(), seen.Sub(exited).Milliseconds(), seen.Sub(at).Milliseconds(), created.Name)
	return seen.Sub(exited), seen.Sub(at)
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
