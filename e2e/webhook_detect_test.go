//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/kubeapi"
)

// TestDetect asks the real API server, as kubeapi.Detect does for the
// webhook: on a cluster with native sidecars (1.37) it keeps the dry-run
// Pod's restartPolicy Always, on one with the SidecarContainers gate off
// (1.30 here) it drops it; the version is the API server's. As the shipped
// ServiceAccount, the shipped Role lets it ask in the webhook's namespace
// and nowhere else, and nothing is stored.
func TestDetect(t *testing.T) {
	t.Parallel()
	s := newSpace(t, "detect")
	want := inject.Cluster{Known: true, NativeSidecars: kube.Features().NativeSidecars, Version: kube.Version().Kube}
	ctx, cancel := context.WithTimeout(s.ctx, 2*kubeapi.DetectTimeout)
	defer cancel()

	got, err := kubeapi.Detect(ctx, kube.RESTConfig(), s.ns)
	if err != nil || got != want {
		t.Errorf("as the admin, in %s: %+v, %v; want %+v", s.ns, got, err, want)
	}

	config, err := clientcmd.BuildConfigFromFlags("", webhookKubeconfig(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	got, err = kubeapi.Detect(ctx, config, chartNamespace)
	if err != nil || got != want {
		t.Errorf("as the webhook's ServiceAccount, in %s: %+v, %v; want %+v", chartNamespace, got, err, want)
	}
	_, err = kubeapi.Detect(ctx, config, s.ns)
	if err == nil || !strings.Contains(err.Error(), "forbidden") || !strings.Contains(err.Error(), "Role") {
		t.Errorf("as the webhook's ServiceAccount, in %s (not its namespace): %v; want forbidden, naming the Role", s.ns, err)
	}

	for _, ns := range []string{s.ns, chartNamespace} {
		pods, err := kube.Client().CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			if strings.HasPrefix(p.Name, "job-signal-detect-") {
				t.Errorf("the dry run stored Pod %s/%s", ns, p.Name)
			}
		}
	}
}

// TestWebhookDetectsNativeSidecars: the webhook installed by its chart, in
// mode auto (the chart's default), checks its cluster at start, as its
// ServiceAccount, and says so in its log and metrics: native sidecars on
// 1.37, none on 1.30. A Job's Pod with a classic sidecar it then injects
// is logged and counted with its form, native sidecars on 1.37 and the
// pair on 1.30, and the Job completes. On any cluster.
func TestWebhookDetectsNativeSidecars(t *testing.T) {
	t.Parallel()
	s := newSpace(t, "webhook-detect")
	hook := installChart(t, []string{s.ns}, "replicaCount=1") // its probe Pod is injected and counted too
	native := kube.Features().NativeSidecars

	checked := hook.waitEvent(t, time.Minute, func(e webhookEvent) bool { return e.Msg == "cluster checked" })
	if checked.NativeSidecars == nil || *checked.NativeSidecars != native || checked.KubeVersion != kube.Version().Kube || checked.Mode != "auto" {
		t.Errorf("the webhook logged %+v; want nativeSidecars %v, kubeVersion %s, mode auto", checked, native, kube.Version().Kube)
	}
	series := `job_signal_webhook_native_sidecars{version="` + kube.Version().Kube + `"}`
	if got, want := hook.metric(t, series), map[bool]float64{true: 1, false: 0}[native]; got != want {
		t.Errorf("%s %v, want %v", series, got, want)
	}
	if got := hook.metric(t, `job_signal_webhook_cluster_checks_total{result="ok"}`); got < 1 {
		t.Errorf("checks ok: %v", got)
	}
	for _, e := range hook.events(t) {
		if e.Msg == "could not check the cluster: until it answers, mode auto gives the pair" {
			t.Errorf("a check failed: %+v", e)
		}
	}

	counted := func(form string) float64 {
		return hook.metric(t, `job_signal_webhook_injected_pods_total{form="`+form+`"}`)
	}
	before := map[string]float64{"pair": counted("pair"), "native": counted("native")}
	job := baselineJob("classic-sidecar", false)
	created, _ := s.createJob(job.DeepCopy())
	done, _ := s.waitJob(created.Name, 3*time.Minute)
	expectJob(t, done, batchv1.JobComplete, batchv1.JobReasonCompletionsReached, 1, 0)
	pod := s.jobPods(done, 1)[0]
	expectPhase(t, pod, corev1.PodSucceeded)
	injected := hook.waitEvent(t, time.Minute, func(e webhookEvent) bool {
		return e.Msg == "injected" && e.Namespace == s.ns && strings.HasPrefix(e.Pod, job.Name+"-") && e.Form != ""
	})
	// The classic sidecar needs nothing native sidecars lack: native
	// where the cluster has them, the pair where it has not.
	t.Logf("the Job's Pod: form %s (%s)", injected.Form, injected.Reason)
	if want := map[bool]inject.Form{true: inject.FormNative, false: inject.FormPair}[native]; injected.Form != string(want) {
		t.Errorf("auto gave form %q (%s); want %s", injected.Form, injected.Reason, want)
	}
	if got := counted(injected.Form) - before[injected.Form]; got != 1 {
		t.Errorf("injected Pods of form %s: %v more, want 1", injected.Form, got)
	}
	if injected.Form == string(inject.FormPair) {
		expectLayout(t, pod, job.Spec.Template.Spec)
	} else if len(pod.Spec.InitContainers) != 1 || pod.Spec.InitContainers[0].RestartPolicy == nil ||
		*pod.Spec.InitContainers[0].RestartPolicy != corev1.ContainerRestartPolicyAlways || len(pod.Spec.Containers) != 1 {
		t.Errorf("form native: init containers %+v, %d containers; want the sidecar as the one native sidecar", pod.Spec.InitContainers, len(pod.Spec.Containers))
	}
}

// TestWebhookModePairChecksNothing: in mode pair the webhook (the
// chart's) needs no answer from the cluster and asks for none.
func TestWebhookModePairChecksNothing(t *testing.T) {
	t.Parallel()
	s := newSpace(t, "webhook-pair")
	hook := installChart(t, []string{s.ns}, "replicaCount=1", "mode=pair")
	said := false
	for _, e := range hook.events(t) {
		said = said || strings.HasPrefix(e.Msg, "mode pair: ")
		if e.Msg == "cluster checked" || strings.HasPrefix(e.Msg, "could not check the cluster") {
			t.Errorf("mode pair checked the cluster: %+v", e)
		}
	}
	if !said {
		t.Error("the webhook did not say that mode pair checks nothing")
	}
	if got := hook.metric(t, `job_signal_webhook_cluster_checks_total{result="ok"}`); got != 0 {
		t.Errorf("mode pair: %v checks", got)
	}
}
