//go:build e2e

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/kubeapi"
)

// TestDetect asks the real API server, as kubeapi.Detect does for the
// plugin (the webhook watches the same facts): its version and every
// Node's kubelet version give native sidecars on 1.37 and none on 1.30.
// As the shipped ServiceAccount, the shipped ClusterRole lets it list the
// Nodes, and it creates nothing.
func TestDetect(t *testing.T) {
	t.Parallel()
	want := inject.Cluster{Known: true, NativeSidecars: kube.Features().NativeSidecars, Version: kube.Version().Kube}
	if !want.NativeSidecars {
		want.Reason = "the API server is " + want.Version + ", before 1.33"
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*kubeapi.DetectTimeout)
	defer cancel()
	got, err := kubeapi.Detect(ctx, kube.RESTConfig())
	if err != nil || got != want {
		t.Errorf("as the admin: %+v, %v; want %+v", got, err, want)
	}
	config, err := clientcmd.BuildConfigFromFlags("", webhookKubeconfig(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	got, err = kubeapi.Detect(ctx, config)
	if err != nil || got != want {
		t.Errorf("as the webhook's ServiceAccount: %+v, %v; want %+v", got, err, want)
	}
}

// TestWebhookCannotCreatePods asks the real API server, as the shipped
// ServiceAccount with the shipped RBAC: a Pod create, in the webhook's own
// namespace or any other, is refused, and a dry run too: it may create
// nothing.
func TestWebhookCannotCreatePods(t *testing.T) {
	t.Parallel()
	s := newSpace(t, "webhook-rbac")
	config, err := clientcmd.BuildConfigFromFlags("", webhookKubeconfig(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "escalate"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "c", Image: busyboxImage, ImagePullPolicy: corev1.PullNever, Command: []string{"true"}}}},
	}
	for _, ns := range []string{chartNamespace, s.ns} {
		for _, dry := range [][]string{nil, {metav1.DryRunAll}} {
			_, err := client.CoreV1().Pods(ns).Create(s.ctx, pod, metav1.CreateOptions{DryRun: dry})
			if !apierrors.IsForbidden(err) {
				t.Errorf("create a Pod in %s (dry run %v) as the webhook's ServiceAccount: %v, want forbidden", ns, dry != nil, err)
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
		return hook.metricSum(t, `job_signal_webhook_injected_pods_total{form="`+form+`",`)
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
