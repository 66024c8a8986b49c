//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/job-signal/job-signal/inject"
)

// The webhook never answers with a patch that makes a valid Pod one the
// API server refuses: a namespace's LimitRange, pod-level resources, a
// Windows Pod.

func quantities(pairs ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		l[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return l
}

// limitedSpace is a namespace whose LimitRange sets a minimum and a
// maxLimitRequestRatio that the install container's own resources (10m
// and 16Mi requested, 100m and 32Mi limits) do not meet.
func limitedSpace(t *testing.T, prefix string, labels ...map[string]string) *space {
	t.Helper()
	s := newSpace(t, prefix, labels...)
	_, err := kube.Client().CoreV1().LimitRanges(s.ns).Create(s.ctx, &corev1.LimitRange{
		ObjectMeta: metav1.ObjectMeta{Name: "limits"},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
			Type:                 corev1.LimitTypeContainer,
			Min:                  quantities("cpu", "50m", "memory", "48Mi"),
			MaxLimitRequestRatio: quantities("cpu", "4"),
			Default:              quantities("cpu", "200m", "memory", "64Mi"),
			DefaultRequest:       quantities("cpu", "50m", "memory", "48Mi"),
		}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestWebhookLimitRange: in a namespace whose LimitRange sets a minimum
// and a maxLimitRequestRatio that the install container's own resources
// do not meet, a Job with a classic sidecar gets its Pod (the install
// container moved into the range) and completes. The webhook is the
// chart's, in mode pair (the install container is what is fitted).
func TestWebhookLimitRange(t *testing.T) {
	t.Parallel()
	s := limitedSpace(t, "webhook-limits")
	installChart(t, []string{s.ns}, "replicaCount=1", "mode=pair") // it lists LimitRanges before it serves
	job := baselineJob("limited", false)
	job.Spec.BackoffLimit = nil
	_, pods := s.run(job, completeWithOnePod, 4*time.Minute)
	expectLayout(t, pods[0], job.Spec.Template.Spec)
	install := pods[0].Spec.InitContainers[0].Resources
	if cpu, mem := install.Requests[corev1.ResourceCPU], install.Limits[corev1.ResourceMemory]; cpu.Cmp(resource.MustParse("50m")) < 0 || mem.Cmp(resource.MustParse("48Mi")) < 0 {
		t.Errorf("install container: requests %v limits %v", install.Requests, install.Limits)
	}
	for _, messages := range s.failedCreates() {
		t.Errorf("the Job controller could not create a Pod: %v", messages)
	}
}

// TestWebhookPodLevelResources: a Job whose Pod has pod-level resources
// (spec.resources, on by default since Kubernetes 1.34) with room for the
// install container is injected and completes; a Pod whose pod-level cpu
// request is below the install container's is created without job-signal,
// saying why, instead of being refused by the API server.
func TestWebhookPodLevelResources(t *testing.T) {
	t.Parallel()
	s := newSpace(t, "webhook-podres")
	probe := gatedPod("probe", busyboxImage, []string{"/app"})
	probe.Spec.Resources = &corev1.ResourceRequirements{Requests: quantities("cpu", "100m")}
	got, err := kube.Client().CoreV1().Pods(s.ns).Create(s.ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.Resources == nil {
		version, _ := kube.Client().Discovery().ServerVersion()
		t.Skipf("the API server (Kubernetes %v) drops spec.resources: pod-level resources are not enabled in this version", version)
	}
	installChart(t, []string{s.ns}, "replicaCount=1", "mode=pair")

	job := baselineJob("pod-resources", false)
	job.Spec.BackoffLimit = nil
	job.Spec.Template.Spec.Resources = &corev1.ResourceRequirements{Requests: quantities("cpu", "200m", "memory", "128Mi"), Limits: quantities("cpu", "1", "memory", "256Mi")}
	_, pods := s.run(job, completeWithOnePod, 4*time.Minute)
	expectLayout(t, pods[0], job.Spec.Template.Spec)

	tight := gatedPod("tight", busyboxImage, []string{"/app"})
	tight.Spec.Resources = &corev1.ResourceRequirements{Requests: quantities("cpu", "5m", "memory", "256Mi")}
	got, err = kube.Client().CoreV1().Pods(s.ns).Create(s.ctx, tight, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatalf("the API server refuses a Pod the webhook answered for: %v", err)
	}
	if why := got.Annotations[inject.AnnotationSkipped]; !uninjected(got) || !strings.Contains(why, "spec.resources.requests.cpu") {
		t.Errorf("tight pod-level requests: uninjected %v, skipped %q", uninjected(got), why)
	}
}

// TestWebhookWindowsPod: a Windows Pod cannot run job-signal's Linux
// binaries: it is created without job-signal, saying so, not refused for
// the install container's Linux-only security settings.
func TestWebhookWindowsPod(t *testing.T) {
	t.Parallel()
	s := newSpace(t, "webhook-windows")
	installChart(t, []string{s.ns}, "replicaCount=1", "mode=pair")
	pod := gatedPod("windows", busyboxImage, []string{"/app"})
	pod.Spec.OS = &corev1.PodOS{Name: corev1.Windows}
	got, err := kube.Client().CoreV1().Pods(s.ns).Create(s.ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatalf("the API server refuses a Windows Pod the webhook answered for: %v", err)
	}
	if why := got.Annotations[inject.AnnotationSkipped]; !uninjected(got) || !strings.Contains(why, "windows") {
		t.Errorf("a Windows Pod: uninjected %v, skipped %q", uninjected(got), why)
	}
}
