//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/job-signal/job-signal/inject"
)

// timingVariants are the Jobs TestJobCompletionOursVsNative runs in turns,
// each with main running the script it is given: with one sidecar wrapped
// by job-signal, the same plain Job injected by the webhook in mode auto
// (native sidecars where the cluster has them, else the pair), with a
// native sidecar written by hand, alone (the floor: no sidecar at all),
// and alone after the install init container of the wrapped Job's layout.
var timingVariants = [...]struct {
	name    string
	webhook bool // created where the webhook in mode auto serves
	job     func(name, main string) *batchv1.Job
}{
	{"ours", false, func(name, main string) *batchv1.Job { return oneSidecar(name, main).job() }},
	{"auto", true, func(name, main string) *batchv1.Job { return withMain(baselineJob(name, false), main) }},
	{"native", false, func(name, main string) *batchv1.Job { return withMain(baselineJob(name, true), main) }},
	{"nosidecar", false, func(name, main string) *batchv1.Job { return withMain(noSidecarJob(name), main) }},
	{"installonly", false, func(name, main string) *batchv1.Job { return withMain(installOnlyJob(name), main) }},
}

// timingMain is the main of every timed Job: two seconds of work and a
// part of a second drawn at random in each run. The kubelet sees a
// container's exit at its next relist, once a second. A Pod with an init
// container starts main just after the relist that saw the init container
// end, so a main that always ran exactly 2 s would end at the same point of
// that cycle in every round, just after a relist: such Pods (job-signal's
// layout among them) would be timed at their worst phase every time, and
// Pods without one at a random phase. Real jobs do not run for whole
// seconds; with the fraction drawn at random every variant is timed over
// the whole cycle.
const timingMain = `echo main working; sleep 2.$(printf %03d $((RANDOM % 1000))); echo main done`

// withMain is job with its first container (main) running script.
func withMain(job *batchv1.Job, script string) *batchv1.Job {
	job.Spec.Template.Spec.Containers[0].Command = []string{"sh", "-c", script}
	return job
}

// TestJobCompletionOursVsNative measures, on this cluster, the timing
// variants in turns:
//
//   - main exit to Complete: from the main container's exit (the runtime's
//     nanosecond timestamp, through the CRI) to the watch delivering the
//     Job's Complete condition;
//   - creation to Complete: from just before the create request to the same
//     moment;
//   - Pod start to main start: from the runtime creating the Pod's sandbox
//     to main's start (both the runtime's nanosecond times, through the
//     CRI): what the install init container and the sidecars' start cost
//     before the job begins.
//
// It logs each run and one E2E_TIMING compare line per measurement (and
// main exit to Pod Succeeded), which make bench reads. Where the cluster has
// no native sidecars that variant is left out, and the line says so
// (native=absent). Not parallel: the other tests wait until it is done.
func TestJobCompletionOursVsNative(t *testing.T) {
	requireNodeProcesses(t, "main's exit time is the runtime's, read through the CRI on the node")
	rounds := 3 // make bench asks for more (E2E_TIMING_ROUNDS)
	if n, err := strconv.Atoi(os.Getenv("E2E_TIMING_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	s := newSpace(t, "timing")
	served := newSpace(t, "timing-auto", map[string]string{inject.LabelInject: "enabled"})
	hook := startWebhook(t, chartModeFlags(t, inject.ModeAuto)...)
	registerWebhook(t, hook.addr, served.ns)
	waitAutoDetected(t, hook)
	var succeeded, exit, create, start [len(timingVariants)][]time.Duration // by timingVariants
	autoForm := inject.Form("none")
	for i := 1; i <= rounds; i++ {
		for v, variant := range timingVariants {
			if variant.name == "native" && !kube.NativeSidecars() {
				continue
			}
			in := s
			if variant.webhook {
				in = served
			}
			d := in.timeJob(variant.job(fmt.Sprintf("%s-%d", variant.name, i), timingMain), variant.name)
			succeeded[v] = append(succeeded[v], d.exitToSucceeded)
			exit[v], create[v] = append(exit[v], d.exitToComplete), append(create[v], d.createToComplete)
			start[v] = append(start[v], d.podStartToMainStart)
			if variant.webhook {
				autoForm = d.form
			}
		}
	}
	native := "present"
	if !kube.NativeSidecars() {
		native = "absent"
	}
	for _, m := range []struct {
		name string
		d    [len(timingVariants)][]time.Duration
	}{{"main_exit_to_Succeeded", succeeded}, {"main_exit_to_Complete", exit}, {"create_to_Complete", create}, {"pod_start_to_main_start", start}} {
		var medians, all []string
		for v, variant := range timingVariants {
			medians = append(medians, fmt.Sprintf("%s_median_ms=%d", variant.name, median(m.d[v]).Milliseconds()))
			all = append(all, fmt.Sprintf("%s_ms=%v", variant.name, millis(m.d[v])))
		}
		t.Logf("E2E_TIMING compare %s kubernetes=%s native=%s auto_form=%s rounds=%d %s %s",
			m.name, kube.Version(), native, autoForm, rounds, strings.Join(medians, " "), strings.Join(all, " "))
	}
}

// durations are one Job's measurements.
type durations struct {
	exitToSucceeded  time.Duration // main's exit to the watch seeing the Pod Succeeded
	exitToComplete   time.Duration // main's exit to the watch seeing the Job Complete
	createToComplete time.Duration // the create request to the same moment
	// podStartToMainStart: the runtime created the Pod's sandbox, then
	// started main.
	podStartToMainStart time.Duration
	form                inject.Form // the record's, "none" when not injected
}

// timeJob runs one Job to Complete and measures it: every container ends
// 0, and a Pod the webhook in mode auto injected has native sidecars
// where the cluster has them.
func (s *space) timeJob(job *batchv1.Job, variant string) durations {
	s.t.Helper()
	d := s.timeJobEnding(job, variant, nil)
	if d.form != "none" && kube.NativeSidecars() && d.form != inject.FormNative {
		s.t.Errorf("Job %s: the webhook in mode auto gave the form %s on a cluster with native sidecars", job.Name, d.form)
	}
	return d
}

// timeJobEnding is timeJob for a Pod whose containers end with codes (0
// for those it does not name), whatever form the webhook chose.
func (s *space) timeJobEnding(job *batchv1.Job, variant string, codes map[string]int32) durations {
	s.t.Helper()
	created, at := s.createJob(job)
	done, seen := s.waitJob(created.Name, 3*time.Minute)
	expectJob(s.t, done, batchv1.JobComplete, batchv1.JobReasonCompletionsReached, 1, 0)
	pods := s.jobPods(done, 1)
	expectPhase(s.t, pods[0], corev1.PodSucceeded)
	expectExits(s.t, pods[0], codes)
	containers, err := kube.CRIContainers(s.ctx, string(pods[0].UID))
	if err != nil {
		s.t.Fatal(err)
	}
	var exited, lastExit, sandbox, mainStart time.Time // main's exit, the last container's; the Pod's start, main's
	for _, c := range containers {
		if c.Name == "main" && c.FinishedAt > 0 {
			exited = time.Unix(0, c.FinishedAt)
			sandbox, mainStart = time.Unix(0, c.SandboxCreatedAt), time.Unix(0, c.StartedAt)
		}
		if end := time.Unix(0, c.FinishedAt); end.After(lastExit) {
			lastExit = end
		}
	}
	if exited.IsZero() || sandbox.Unix() == 0 {
		s.t.Fatalf("the runtime has no finished container main in Pod %s, or no sandbox for it", pods[0].Name)
	}
	form := inject.Form("none")
	if inject.Injected(pods[0].Annotations) {
		form = recordOf(s.t, pods[0]).Form
	}
	succeeded, _ := s.pods.first(pods[0].UID, func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
	d := durations{succeeded.at.Sub(exited), seen.Sub(exited), seen.Sub(at), mainStart.Sub(sandbox), form}
	s.t.Logf("E2E_TIMING variant=%s main_exit_to_last_container_exit_ms=%d main_exit_to_Succeeded_ms=%d main_exit_to_Complete_ms=%d create_to_Complete_ms=%d pod_start_to_main_start_ms=%d form=%s job=%s",
		variant, lastExit.Sub(exited).Milliseconds(), d.exitToSucceeded.Milliseconds(), d.exitToComplete.Milliseconds(), d.createToComplete.Milliseconds(),
		d.podStartToMainStart.Milliseconds(), form, created.Name)
	return d
}

// median is the middle value (0 for none).
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func millis(ds []time.Duration) []int64 {
	out := []int64{}
	for _, d := range ds {
		out = append(out, d.Milliseconds())
	}
	return out
}
