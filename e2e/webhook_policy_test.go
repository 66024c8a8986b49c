//go:build e2e

package e2e

import (
	"encoding/pem"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/servingcert"
	"github.com/job-signal/job-signal/internal/testing/webhooktest"
	"github.com/job-signal/job-signal/internal/webhook"
)

// TestPolicyRefusesPodsThatWouldHang proves the chart's
// ValidatingAdmissionPolicy (CEL, evaluated by the API server) Pod by Pod,
// with no mutating webhook registered: dry-run creations of Job Pods of
// every shape that matters. A Pod whose containers would keep running
// after the job is refused with a line naming them; one job-signal
// covers (the pair, native sidecars, ignored containers), left alone on
// purpose (skipped, wired by hand, opted out), or that ends by itself is
// created. With failurePolicy Ignore the same Pod is created, with the
// message as a warning.
func TestPolicyRefusesPodsThatWouldHang(t *testing.T) {
	t.Parallel()
	s := newSpace(t, "policy", map[string]string{inject.LabelInject: "enabled"})
	lenient := newSpace(t, "policy-ignore", map[string]string{inject.LabelInject: "enabled"})
	// No webhook is called: the chart wants a CA for its registration,
	// any one (an attached cluster's is not known).
	issued, err := servingcert.Issue([]string{"127.0.0.1"}, time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	anyCA := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: issued.CA.Raw})
	registerPolicy(t, chartRegistration(t, "https://127.0.0.1:1/mutate", anyCA, ""), s.ns)
	registerPolicy(t, chartRegistration(t, "https://127.0.0.1:1/mutate", anyCA, admissionregistrationv1.Ignore), lenient.ns)
	handler := webhooktest.Start(t, &webhook.Config{})

	container := func(name string) corev1.Container {
		return corev1.Container{Name: name, Image: busyboxImage, ImagePullPolicy: corev1.PullNever, Command: []string{"/bin/" + name}}
	}
	pod := func(change ...func(*corev1.Pod)) *corev1.Pod {
		p := jobOwnedPod("", container("main"), container("proxy"))
		p.GenerateName = "policy-"
		p.Annotations = map[string]string{inject.AnnotationDefaultContainer: "main"}
		for _, c := range change {
			c(p)
		}
		return p
	}
	injected := func(p *corev1.Pod) {
		after, _ := handler.Review(t, p)
		if !inject.Injected(after.Annotations) {
			t.Fatalf("the handler did not inject %s", podSummary(p))
		}
		*p = *after
	}
	added := func(p *corev1.Pod) { p.Spec.Containers = append(p.Spec.Containers, container("mesh")) }
	native := func(p *corev1.Pod) { // native sidecars, as inject moves them, with its record
		side := p.Spec.Containers[1]
		side.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
		p.Spec.InitContainers, p.Spec.Containers = []corev1.Container{side}, p.Spec.Containers[:1]
		p.Annotations[inject.AnnotationInjected] = `{"v":3,"form":"native","moved":[{"name":"proxy","index":1,"added":["restartPolicy"]}]}`
	}
	annotate := func(k, v string) func(*corev1.Pod) { return func(p *corev1.Pod) { p.Annotations[k] = v } }
	ignoredLogs := func(p *corev1.Pod) {
		p.Spec.Containers = append(p.Spec.Containers, container("logs"))
		p.Annotations[inject.Prefix+"ignore"] = " logs"
	}
	for _, tc := range []struct {
		name    string
		pod     *corev1.Pod
		refused string // in the message; "" when created
	}{
		{"two containers, nothing of job-signal", pod(), "containers main, proxy of this Job's Pod would keep it running"},
		{"the pair", pod(injected), ""},
		{"the pair, then a container added", pod(injected, added), "container mesh was added to this Job's Pod after job-signal injected it"},
		{"the pair, a container ignored", pod(ignoredLogs, injected), ""},
		{"native sidecars", pod(native), ""},
		{"native sidecars, then a container added", pod(native, added), "containers main, mesh of this Job's Pod: all but the job were added after job-signal gave it native sidecars"},
		{"one container and one ignored, no job-signal", pod(func(p *corev1.Pod) { p.Annotations[inject.Prefix+"ignore"] = "proxy" }), ""},
		{"skipped, the reason recorded", pod(annotate(inject.AnnotationSkipped, "a registry refused the image")), ""},
		{"wired by hand", pod(injected, func(p *corev1.Pod) { delete(p.Annotations, inject.AnnotationInjected) }), ""},
		{"opted out", pod(func(p *corev1.Pod) { p.Labels = map[string]string{inject.LabelInject: "disabled"} }), ""},
		{"one container", pod(func(p *corev1.Pod) { p.Spec.Containers = p.Spec.Containers[:1] }), ""},
		{"not a Job's", pod(func(p *corev1.Pod) { p.OwnerReferences = nil }), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := kube.Client().CoreV1().Pods(s.ns).Create(s.ctx, tc.pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			switch {
			case tc.refused == "" && err != nil:
				t.Errorf("refused: %v; want it created", err)
			case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), policyMessage+tc.refused)):
				t.Errorf("%v; want it refused saying %q", err, tc.refused)
			case err != nil && strings.ContainsAny(err.Error(), "\r\n"):
				t.Errorf("the message is more than one line: %q", err)
			}
			if tc.refused == "" {
				return
			}
			warnings := &warningRecorder{}
			config := kube.RESTConfig()
			config.WarningHandler = warnings
			client, err := kubernetes.NewForConfig(config)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := client.CoreV1().Pods(lenient.ns).Create(s.ctx, tc.pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil || !warnings.saw(policyMessage+tc.refused) {
				t.Errorf("with failurePolicy Ignore: %v, warnings %q; want it created with the message as a warning", err, warnings.text)
			}
		})
	}
}
