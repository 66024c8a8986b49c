//go:build e2e

package registry

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/resolve"
	"github.com/job-signal/job-signal/internal/testing/webhooktest"
	"github.com/job-signal/job-signal/internal/webhook"
)

// webhookServer runs the real webhook server on 127.0.0.1 and returns a
// function that reviews a Pod and returns it as the API server would
// store it.
func webhookServer(t *testing.T, cfg *webhook.Config) func(*corev1.Pod) (*corev1.Pod, *admissionv1.AdmissionResponse) {
	s := webhooktest.Start(t, cfg)
	return func(pod *corev1.Pod) (*corev1.Pod, *admissionv1.AdmissionResponse) { return s.Review(t, pod) }
}

func jobPod(image string, pullSecrets ...string) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "app-", Namespace: "batch",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "app", UID: "j"}}},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{
			{Name: "app", Image: image, Args: []string{"--once"}},
			{Name: "proxy", Image: "busybox:1.37", Command: []string{"/proxy"}},
		}},
	}
	for _, s := range pullSecrets {
		pod.Spec.ImagePullSecrets = append(pod.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: s})
	}
	return pod
}

// TestWebhookPullSecret: the webhook looks a private image up with the
// Pod's imagePullSecret (read through SecretGetter; e2e's
// TestWebhookLooksUpEntrypoint reads it from a real API server), and
// admits the Pod unchanged, saying why, without it.
func TestWebhookPullSecret(t *testing.T) {
	reg := Start(t, "puller", "s3cret")
	ref := reg.Host + "/private/app:1"
	Push(t, ref, Image(t, []string{"/app"}, []string{"serve"}), &authn.Basic{Username: "puller", Password: "s3cret"})
	secret := &corev1.Secret{Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{
		corev1.DockerConfigJsonKey: []byte(`{"auths": {"` + reg.Host + `": {"username": "puller", "password": "s3cret"}}}`)}}
	var mu sync.Mutex
	var asked []string
	review := webhookServer(t, &webhook.Config{Resolver: resolve.New(nil, 8), RegistryTimeout: 5 * time.Second,
		Secrets: func(_ context.Context, namespace, name string) (*corev1.Secret, error) {
			mu.Lock()
			asked = append(asked, namespace+"/"+name)
			mu.Unlock()
			if name != "registry" {
				return nil, fmt.Errorf("secrets %q not found", name)
			}
			return secret, nil
		}})

	after, _ := review(jobPod(ref, "registry"))
	if c := after.Spec.Containers[0]; c.Command[0] != inject.JobSignalPath || !slices.Equal(c.Args, []string{"/app", "--once"}) {
		t.Errorf("with the pull secret: command %q args %q", c.Command, c.Args)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(asked, []string{"batch/registry"}) {
		t.Errorf("secrets read: %v", asked)
	}
	after, resp := review(jobPod(ref))
	if why := after.Annotations[inject.AnnotationSkipped]; !strings.Contains(why, "401") || len(resp.Warnings) == 0 || after.Spec.Containers[0].Command != nil {
		t.Errorf("without: skipped %q, warnings %v, command %q", why, resp.Warnings, after.Spec.Containers[0].Command)
	}
}

// TestWebhookLatency measures the admission latency of the webhook's HTTPS
// handler, p50 and p99 over 200 Pods, when the image's ENTRYPOINT is in the
// cache (a HEAD request for the tag's digest) and when it is not (200
// different images: HEAD, manifest, config), and with no lookup at all.
func TestWebhookLatency(t *testing.T) {
	const n = 200
	reg := Start(t, "", "")
	for i := range n + 1 {
		Push(t, fmt.Sprintf("%s/jobs/app-%d:1", reg.Host, i), Image(t, []string{"/app", fmt.Sprint(i)}, nil), authn.Anonymous)
	}
	review := webhookServer(t, &webhook.Config{Resolver: resolve.New(nil, 1024), RegistryTimeout: 5 * time.Second})
	measure := func(label string, pod func(i int) *corev1.Pod) {
		var took []time.Duration
		for i := range n {
			p := pod(i)
			start := time.Now()
			after, _ := review(p)
			took = append(took, time.Since(start))
			if !inject.Injected(after.Annotations) {
				t.Fatalf("%s: not injected: %v", label, after.Annotations)
			}
		}
		sort.Slice(took, func(a, b int) bool { return took[a] < took[b] })
		p50, p99 := took[n/2], took[n*99/100]
		t.Logf("E2E_TIMING webhook_admission_%s p50_ms=%.2f p99_ms=%.2f (n=%d)", label, ms(p50), ms(p99), n)
	}
	review(jobPod(reg.Host + "/jobs/app-200:1")) // connections warm, cache holds app-200
	measure("no_lookup", func(int) *corev1.Pod {
		p := jobPod("busybox:1.37")
		p.Spec.Containers[0].Command = []string{"/app"}
		return p
	})
	measure("uncached", func(i int) *corev1.Pod { return jobPod(fmt.Sprintf("%s/jobs/app-%d:1", reg.Host, i)) })
	measure("cached", func(int) *corev1.Pod { return jobPod(reg.Host + "/jobs/app-200:1") })
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
