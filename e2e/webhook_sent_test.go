//go:build e2e

package e2e

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/testing/webhooktest"
	"github.com/job-signal/job-signal/internal/webhook"
)

// TestWebhookSendsOnlyPodsThatCanNeedIt proves the shipped
// matchConditions (CEL, evaluated by the API server) Pod by Pod: with the
// webhook registered as shipped and stopped, a Pod the API server sends is
// refused ("failed calling webhook"), one it does not is created (dry
// run). Each case is also reviewed by the webhook's handler in this
// process: every Pod it would inject or deny must be one that is sent, so
// the registration never keeps a Pod from the webhook that needs it.
func TestWebhookSendsOnlyPodsThatCanNeedIt(t *testing.T) {
	t.Parallel()
	s := newSpace(t, "webhook-sent")
	installChart(t, []string{s.ns}, "replicaCount=1").scale(0) // down: the registration stays
	handler := webhooktest.Start(t, &webhook.Config{})

	container := func(name string) corev1.Container {
		return corev1.Container{Name: name, Image: busyboxImage, ImagePullPolicy: corev1.PullNever, Command: []string{"/bin/" + name}}
	}
	// pod is a Job's Pod with a sidecar, with no labels or annotations at
	// all (absent fields), then changed by each of change.
	pod := func(change ...func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "sent-", Namespace: s.ns, OwnerReferences: []metav1.OwnerReference{
				{APIVersion: "batch/v1", Kind: "Job", Name: "export", UID: "00000000-0000-0000-0000-000000000001"}}},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{container("main"), container("proxy")}},
		}
		for _, c := range change {
			c(p)
		}
		return p
	}
	owner := func(apiVersion, kind string) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.OwnerReferences[0].APIVersion, p.OwnerReferences[0].Kind = apiVersion, kind }
	}
	restart := func(r corev1.RestartPolicy) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.Spec.RestartPolicy = r }
	}
	label := func(v string) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.Labels = map[string]string{inject.LabelInject: v} }
	}
	bare := func(p *corev1.Pod) { p.OwnerReferences = nil }
	one := func(p *corev1.Pod) { p.Spec.Containers = p.Spec.Containers[:1] }
	injected := func(p *corev1.Pod) {
		after, _ := handler.Review(t, p)
		if !inject.Injected(after.Annotations) {
			t.Fatalf("the handler did not inject %s", podSummary(p))
		}
		*p = *after
	}
	added := func(p *corev1.Pod) { p.Spec.Containers = append(p.Spec.Containers, container("mesh")) }
	ignored := func(p *corev1.Pod) {
		p.Spec.Containers = append(p.Spec.Containers, container("logs"))
		p.Annotations = map[string]string{"job-signal.dev/ignore": "logs"}
	}
	byHand := func(p *corev1.Pod) { delete(p.Annotations, inject.AnnotationInjected) }

	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		sent bool
	}{
		{"a Job's Pod with a sidecar, no labels or annotations", pod(), true},
		{"a Job's Pod, restartPolicy OnFailure", pod(restart(corev1.RestartPolicyOnFailure)), true},
		{"a Job's Pod of one container", pod(one), false},
		{"a Job's Pod labelled disabled", pod(label("disabled")), false},
		{"a Job of another API group", pod(owner("example.com/v1", "Job")), false},
		{"a ReplicaSet's Pod", pod(owner("apps/v1", "ReplicaSet"), restart(corev1.RestartPolicyAlways)), false},
		{"a ReplicaSet's Pod, restartPolicy Never", pod(owner("apps/v1", "ReplicaSet")), false},
		{"a bare Pod, restartPolicy Never", pod(bare), false},
		{"a bare Pod labelled enabled", pod(bare, label("enabled")), true},
		{"a bare Pod labelled enabled, restartPolicy Always", pod(bare, label("enabled"), restart(corev1.RestartPolicyAlways)), false},
		{"injected, every container wrapped", pod(injected), false},
		{"injected, then a container added (a later webhook's)", pod(injected, added), true},
		{"injected with a container ignored", pod(ignored, injected), true},
		{"wired by hand: the layout's volumes, no record", pod(injected, byHand), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := kube.Client().CoreV1().Pods(s.ns).Create(s.ctx, tc.pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			sent := err != nil && strings.Contains(err.Error(), "failed calling webhook")
			if err != nil && !sent {
				t.Fatalf("refused for another reason: %v", err)
			}
			if sent != tc.sent {
				t.Errorf("sent to the webhook: %v, want %v (%v)", sent, tc.sent, err)
			}
			resp := handler.Answer(t, tc.pod)
			if acts := !resp.Allowed || resp.Patch != nil; acts && !sent {
				t.Errorf("the webhook would inject or deny it (allowed %v, patch %s), but the API server does not send it", resp.Allowed, resp.Patch)
			}
		})
	}
}
