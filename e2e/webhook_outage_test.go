//go:build e2e

package e2e

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/job-signal/job-signal/e2e/registry"
	"github.com/job-signal/job-signal/inject"
)

// uninjected: a Pod stored without job-signal.
func uninjected(p *corev1.Pod) bool {
	return len(p.Spec.InitContainers) == 0 && !inject.Injected(p.Annotations) &&
		slices.IndexFunc(p.Spec.Containers, func(c corev1.Container) bool { return len(c.Command) > 0 && c.Command[0] == inject.JobSignalPath }) < 0
}

// TestWebhookOutageJobsComplete: the webhook (the chart's, mode pair) is
// down, its Deployment scaled to no replica, while 10 Jobs with a classic
// sidecar are created in a namespace it serves. The API server refuses
// their Pods (failurePolicy Fail, as shipped: only Pods of more than one
// container are sent), which the Jobs' events say; none is admitted
// without job-signal. Back (one replica), the webhook injects every Pod
// the Job controller creates again, and every Job completes.
func TestWebhookOutageJobsComplete(t *testing.T) {
	t.Parallel()
	s := newSpace(t, "webhook-outage")
	hook := installChart(t, []string{s.ns}, "replicaCount=1", "mode=pair")
	hook.scale(0)

	var names []string
	for i := range 10 {
		job := baselineJob(fmt.Sprintf("outage-%d", i), false)
		job.Spec.BackoffLimit = nil // the default, 6: a Pod that failed to start is not the test's point
		created, _ := s.createJob(job)
		names = append(names, created.Name)
	}
	// What a user sees in `kubectl describe job`: the API server's refusal.
	s.waitFailedCreates(names, "failed calling webhook", 3*time.Minute)

	hook.scale(1)
	for _, name := range names {
		done, _ := s.waitJob(name, 6*time.Minute)
		expectJob(t, done, batchv1.JobComplete, batchv1.JobReasonCompletionsReached, 1, 0)
	}
	for _, o := range s.pods.latest() {
		if uninjected(o.obj) {
			t.Errorf("Pod %s was admitted without job-signal: %s", o.obj.Name, podSummary(o.obj))
		}
	}
	if n := hook.metric(t, `job_signal_webhook_admissions_total{outcome="injected",reason="none"}`); n < 10 {
		t.Errorf("the restarted webhook counts %v injected Pods, want at least 10", n)
	}
}

// TestWebhookOutagePolicy: what each kind of failure costs a Pod's
// creation, with the shipped configuration (failurePolicy Fail, only Pods
// of more than one container sent). A Pod that needs job-signal is
// refused, with the reason, when the registry hangs or is down, when the
// webhook is stopped and when it hangs; a Pod of one container, and one
// opted out, are created at once, unchanged, even then. With policy
// Ignore (the webhook's flag and the configuration's failurePolicy, as
// failure-policy.sh sets both), the Pod is admitted without job-signal,
// the reason recorded.
func TestWebhookOutagePolicy(t *testing.T) {
	t.Parallel()
	s := newSpace(t, "webhook-policy", map[string]string{inject.LabelInject: "enabled"})
	silent := registry.Silent(t)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := closed.Addr().String()
	closed.Close() // nothing listens there now
	const registryTimeout = 2 * time.Second
	hook := startWebhook(t, "--registry-timeout="+registryTimeout.String())
	registerWebhook(t, hook.addr, s.ns)

	create := func(pod *corev1.Pod) (*corev1.Pod, time.Duration, error) {
		t.Helper()
		start := time.Now()
		created, err := kube.Client().CoreV1().Pods(s.ns).Create(s.ctx, pod, metav1.CreateOptions{})
		took := time.Since(start)
		t.Logf("E2E_TIMING webhook_outage case=%s create_ms=%d err=%v", pod.Name, took.Milliseconds(), err != nil)
		return created, took, err
	}
	refused := func(name string, pod *corev1.Pod, says string, min, max time.Duration) {
		t.Helper()
		_, took, err := create(pod)
		if err == nil || !strings.Contains(err.Error(), says) || took < min || took > max {
			t.Errorf("%s: created after %v (want refused in %v to %v, saying %q): %v", name, took, min, max, says, err)
		}
	}
	admitted := func(name string, pod *corev1.Pod, max time.Duration) *corev1.Pod {
		t.Helper()
		got, took, err := create(pod)
		if err != nil || took > max || !uninjected(got) {
			t.Errorf("%s: want created at once, unchanged: after %v, %v", name, took, err)
			return &corev1.Pod{}
		}
		return got
	}
	one := func(name string) *corev1.Pod {
		p := gatedPod(name, busyboxImage, []string{"/app"})
		p.Spec.Containers = p.Spec.Containers[:1]
		return p
	}
	optedOut := func(name string) *corev1.Pod {
		p := gatedPod(name, busyboxImage, []string{"/app"})
		p.Labels[inject.LabelInject] = "disabled"
		return p
	}
	// Bounds leave room for a loaded machine.
	refused("registry silent", gatedPod("registry-silent", silent+"/app:1", nil), "did not answer within "+registryTimeout.String(), registryTimeout, registryTimeout+8*time.Second)
	refused("registry down", gatedPod("registry-down", down+"/app:1", nil), "connection refused", 0, 8*time.Second)
	admitted("one container, registry silent", one("one-registry-silent"), 8*time.Second)
	if n := hook.metric(t, `job_signal_webhook_admissions_total{outcome="denied",reason="registry"}`); n != 2 {
		t.Errorf("the webhook counts %v Pods denied for the registry, want 2", n)
	}
	hook.stop(t)
	refused("webhook stopped", gatedPod("webhook-stopped", busyboxImage, []string{"/app"}), "failed calling webhook", 0, 8*time.Second)
	admitted("one container, webhook stopped", one("one-webhook-stopped"), 8*time.Second)
	admitted("opted out, webhook stopped", optedOut("opted-out-webhook-stopped"), 8*time.Second)
	// A webhook that accepts connections and never answers (hung, or a
	// black hole in front of it) costs each Pod that needs it the shipped
	// timeoutSeconds; the others nothing.
	hangAt(t, hook.addr)
	timeout := time.Duration(*readShippedWebhook(t).config.Webhooks[0].TimeoutSeconds) * time.Second
	refused("webhook hung", gatedPod("webhook-hung", busyboxImage, []string{"/app"}), "failed calling webhook", timeout-time.Second, timeout+8*time.Second)
	admitted("one container, webhook hung", one("one-webhook-hung"), 8*time.Second)

	// Availability first: the same registry failure admits the Pod without
	// job-signal, saying why.
	ignoring := newSpace(t, "webhook-ignore", map[string]string{inject.LabelInject: "enabled"})
	lenient := startWebhook(t, "--registry-timeout="+registryTimeout.String(), "--failure-policy=Ignore")
	registerWebhookPolicy(t, lenient.addr, admissionregistrationv1.Ignore, ignoring.ns)
	got, err := kube.Client().CoreV1().Pods(ignoring.ns).Create(ignoring.ctx, gatedPod("registry-silent", silent+"/app:1", nil), metav1.CreateOptions{})
	if err != nil || !uninjected(got) || !strings.Contains(got.Annotations[inject.AnnotationSkipped], "did not answer") {
		t.Errorf("policy Ignore, registry silent: %v, annotations %v", err, got.GetAnnotations())
	}
}

// TestWebhookOutageBlastRadius: with the webhook down (installed by its
// chart, scaled to no replica: the registration stays), in a namespace it
// serves, only the Pods it serves wait for it. A Deployment, a
// StatefulSet, a DaemonSet and a bare restartPolicy Always Pod, each of
// two containers, are all created at once, as the chart's registration
// never sends them; a Job with a sidecar is refused (failurePolicy Fail)
// and completes, injected, once the webhook is back. On any cluster.
func TestWebhookOutageBlastRadius(t *testing.T) {
	t.Parallel()
	s := newSpace(t, "webhook-blast")
	hook := installChart(t, []string{s.ns}, "replicaCount=1")
	hook.scale(0)

	// Two containers each, held unscheduled by a gate: admission is the
	// point, and a gate is allowed in every controller's template.
	template := func(app string) corev1.PodTemplateSpec {
		c := func(name string) corev1.Container {
			return corev1.Container{Name: name, Image: busyboxImage, ImagePullPolicy: corev1.PullNever, Command: []string{"sleep", "3600"}}
		}
		return corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{c("web"), c("proxy")},
				SchedulingGates:               []corev1.PodSchedulingGate{{Name: "e2e.job-signal.dev/admission-only"}},
				TerminationGracePeriodSeconds: ptr.To(int64(1))},
		}
	}
	selector := func(app string) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
	}
	apps := kube.Client().AppsV1()
	start := time.Now()
	job, _ := s.createJob(baselineJob("blast-job", false))
	if _, err := apps.Deployments(s.ns).Create(s.ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "deploy"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(1)), Selector: selector("deploy"), Template: template("deploy")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := apps.StatefulSets(s.ns).Create(s.ctx, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "sts"},
		Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(int32(1)), ServiceName: "sts", Selector: selector("sts"), Template: template("sts")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := apps.DaemonSets(s.ns).Create(s.ctx, &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "ds"},
		Spec: appsv1.DaemonSetSpec{Selector: selector("ds"), Template: template("ds")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bare := template("bare")
	if _, err := kube.Client().CoreV1().Pods(s.ns).Create(s.ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "bare", Labels: bare.Labels},
		Spec: bare.Spec}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("a bare restartPolicy Always Pod with the webhook down: %v", err)
	}
	// Every workload's Pod is stored, while the Job's is refused.
	err := s.pods.waitFor(2*time.Minute, func(all []observation[*corev1.Pod]) (bool, string) {
		missing := []string{}
		for _, app := range []string{"deploy", "sts", "ds", "bare"} {
			if !slices.ContainsFunc(all, func(o observation[*corev1.Pod]) bool { return o.obj.Labels["app"] == app }) {
				missing = append(missing, app)
			}
		}
		return len(missing) == 0, fmt.Sprintf("no Pod yet of %v", missing)
	})
	if err != nil {
		t.Fatalf("with the webhook down: %v", err)
	}
	t.Logf("E2E_TIMING webhook_blast_radius workloads_admitted_ms=%d", time.Since(start).Milliseconds())
	s.waitFailedCreates([]string{job.Name}, "failed calling webhook", 3*time.Minute)
	events, err := kube.Client().CoreV1().Events(s.ns).List(s.ctx, metav1.ListOptions{FieldSelector: "reason=FailedCreate"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.InvolvedObject.Kind != "Job" {
			t.Errorf("%s %s could not create a Pod with the webhook down: %s", e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Message)
		}
	}
	for _, o := range s.pods.latest() {
		if o.obj.Labels["app"] != "" && !uninjected(o.obj) {
			t.Errorf("Pod %s was changed: %s", o.obj.Name, podSummary(o.obj))
		}
	}

	hook.scale(1)
	done, _ := s.waitJob(job.Name, 6*time.Minute)
	expectJob(t, done, batchv1.JobComplete, batchv1.JobReasonCompletionsReached, 1, 0)
	for _, o := range s.pods.latest() {
		if o.obj.Labels["app"] == "" && uninjected(o.obj) {
			t.Errorf("the Job's Pod %s was admitted without job-signal: %s", o.obj.Name, podSummary(o.obj))
		}
	}
	if n := hook.metric(t, `job_signal_webhook_admissions_total{outcome="injected",reason="none"}`); n < 1 {
		t.Errorf("the restarted webhook counts %v injected Pods, want 1", n)
	}
}
