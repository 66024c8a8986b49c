//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/job-signal/job-signal/inject"
)

// TestWebhookJobAdmission measures what the chart's Job webhooks add to a
// Job's creation through the API server, and checks what they write: n
// server-side dry-run creations of each kind (E2E_WEBHOOK_JOBS, default
// 20; make bench asks for 200), in turns:
//
//   - none: a namespace the webhook is not registered for (the API server
//     alone, the reference);
//   - not_sent: a served namespace, a Job whose podFailurePolicy has no
//     onExitCodes rule (the matchConditions keep it from the webhook);
//   - recorded: a served namespace, a Job with an onExitCodes rule without
//     containerName: the webhook writes job-signal.dev/exit-code-rules: "*"
//     into its Pod template, which the stored (dry-run) Job carries.
//
// For each it logs the create request's time at the client, and for
// recorded the webhook's own handling time from its log.
func TestWebhookJobAdmission(t *testing.T) {
	t.Parallel()
	n := 20
	if v, err := strconv.Atoi(os.Getenv("E2E_WEBHOOK_JOBS")); err == nil && v > 0 {
		n = v
	}
	served := newSpace(t, "webhook-jobs", map[string]string{inject.LabelInject: "enabled"})
	alone := newSpace(t, "webhook-jobs-none", map[string]string{inject.LabelInject: "enabled"})
	hook := startWebhook(t)
	registerWebhook(t, hook.addr, served.ns)
	config := kube.RESTConfig()
	config.QPS, config.Burst = 1000, 1000 // the client's rate limit must not be in the figures
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	job := func(name string, exitCodes bool) *batchv1.Job {
		j := baselineJob(name, false)
		rule := batchv1.PodFailurePolicyRule{Action: batchv1.PodFailurePolicyActionIgnore,
			OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: "DisruptionTarget"}}}
		if exitCodes {
			rule = batchv1.PodFailurePolicyRule{Action: batchv1.PodFailurePolicyActionIgnore,
				OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{143}}}
		}
		j.Spec.PodFailurePolicy = &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{rule}}
		j.Spec.Template.Spec.RestartPolicy = "Never"
		j.Spec.BackoffLimit = ptr.To(int32(1))
		return j
	}
	variants := []struct {
		name, ns  string
		exitCodes bool
	}{{"none", alone.ns, true}, {"not_sent", served.ns, false}, {"recorded", served.ns, true}}
	took := map[string][]time.Duration{}
	create := func(variant, ns string, exitCodes bool, i int) {
		name := fmt.Sprintf("%s-%d", strings.ReplaceAll(variant, "_", "-"), i)
		if i < 0 {
			name = "warm-up-" + strings.ReplaceAll(variant, "_", "-") // not counted
		}
		start := time.Now()
		created, err := client.BatchV1().Jobs(ns).Create(served.ctx, job(name, exitCodes), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			t.Fatalf("create Job %s: %v", name, err)
		}
		if i >= 0 {
			took[variant] = append(took[variant], time.Since(start))
		}
		got, ok := created.Spec.Template.Annotations[inject.AnnotationExitCodeRules]
		if want := variant == "recorded"; ok != want || want && got != "*" {
			t.Fatalf("Job %s (%s): the template's %s is %q (%v)", name, variant, inject.AnnotationExitCodeRules, got, ok)
		}
	}
	for _, v := range variants {
		create(v.name, v.ns, v.exitCodes, -1) // warm: connections
	}
	for i := range n {
		for _, v := range variants {
			create(v.name, v.ns, v.exitCodes, i)
		}
	}

	// The webhook's own time: its "recorded" lines name the Job, its
	// "reviewed" lines give the time; both carry the request's UID.
	var handling []time.Duration
	deadline := time.Now().Add(30 * time.Second)
	for {
		jobOf, total := map[string]string{}, map[string]time.Duration{}
		events := hook.events(t)
		for _, e := range events {
			if e.Job != "" && e.Namespace == served.ns && e.Msg == "recorded in the Job's Pod template which containers its podFailurePolicy judges by exit code" {
				jobOf[e.UID] = e.Job
			}
		}
		for _, e := range events {
			if job, ok := jobOf[e.UID]; ok && e.Msg == "reviewed" {
				total[job] += time.Duration(e.Elapsed)
			}
		}
		handling = handling[:0]
		for i := range n {
			if d, ok := total[fmt.Sprintf("recorded-%d", i)]; ok {
				handling = append(handling, d)
			}
		}
		if len(handling) == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s, the webhook's log has the handling of %d of the %d recorded Jobs", len(handling), n)
		}
		time.Sleep(100 * time.Millisecond) // its last lines may follow its answers: poll the log, bounded
	}
	for _, v := range variants {
		line := fmt.Sprintf("E2E_TIMING webhook_jobs variant=%s n=%d create_p50_ms=%.2f create_p99_ms=%.2f",
			v.name, n, ms(percentile(took[v.name], 50)), ms(percentile(took[v.name], 99)))
		var h []time.Duration
		if v.name == "recorded" {
			h = handling
			line += fmt.Sprintf(" handling_p50_ms=%.2f handling_p99_ms=%.2f", ms(percentile(h, 50)), ms(percentile(h, 99)))
		}
		t.Log(line + " create_us=" + micros(took[v.name]) + " handling_us=" + micros(h))
	}
}
