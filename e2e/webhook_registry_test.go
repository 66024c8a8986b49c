//go:build e2e

package e2e

import (
	"encoding/base64"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/job-signal/job-signal/e2e/cluster"
	"github.com/job-signal/job-signal/e2e/registry"
	"github.com/job-signal/job-signal/inject"
)

// appEntrypoint is the ENTRYPOINT of the image pushed for the lookup test:
// a script that says what it was started with.
const appEntrypoint = "/usr/local/bin/app"

// pushAppImage pushes, to ref, busybox plus a script as ENTRYPOINT, with a
// CMD that a Pod's args must replace. The image the kubelet runs is the
// one the webhook looks up: there is no second copy to keep in step.
func pushAppImage(t *testing.T, ref string, auth authn.Authenticator) {
	t.Helper()
	files, err := cluster.BusyboxFiles()
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, cluster.File{Name: strings.TrimPrefix(appEntrypoint, "/"), Mode: 0o755,
		Body: []byte("#!/bin/sh\necho \"app: ENTRYPOINT ran with $*\"\n")})
	archive := filepath.Join(t.TempDir(), "app.tar")
	err = cluster.WriteArchive(archive, cluster.Image{Ref: ref, Files: files, Entrypoint: []string{appEntrypoint},
		Cmd: []string{"--from-cmd"}, Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin"}})
	if err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(archive, nil)
	if err != nil {
		t.Fatal(err)
	}
	registry.Push(t, ref, img, auth)
}

// TestWebhookLooksUpEntrypoint (issue 11): a Pod labelled
// job-signal.dev/inject=enabled, in a namespace that is not (the shipped
// configuration's second webhook), whose main container gives only args,
// and whose image is in a real registry that wants basic auth. The webhook
// reads the Pod's imagePullSecret through the API as the shipped
// ServiceAccount, looks the image's ENTRYPOINT up and wraps it; the kubelet
// pulls the same image with the same secret; the Pod runs the ENTRYPOINT
// with the Pod's args (the image's CMD replaced, as Kubernetes does) under
// job-signal, and succeeds. Without the secret, the Pod is admitted
// unchanged and says why.
func TestWebhookLooksUpEntrypoint(t *testing.T) {
	t.Parallel()
	reg := registry.Start(t, "puller", "s3cret")
	ref := reg.Host + "/private/app:1"
	pushAppImage(t, ref, &authn.Basic{Username: "puller", Password: "s3cret"})
	s := newSpace(t, "webhook-lookup")
	auth := base64.StdEncoding.EncodeToString([]byte("puller:s3cret"))
	_, err := kube.Client().CoreV1().Secrets(s.ns).Create(s.ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "registry-pull"},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(fmt.Sprintf(
			`{"auths": {%q: {"username": "puller", "password": "s3cret", "auth": %q}}}`, reg.Host, auth))},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hook := startWebhook(t)
	registerWebhook(t, hook.addr, s.ns)

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "app", Labels: map[string]string{inject.LabelInject: "enabled"}},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: ptr.To(int64(10)),
			ImagePullSecrets:              []corev1.LocalObjectReference{{Name: "registry-pull"}},
			Containers: []corev1.Container{
				{Name: "main", Image: ref, ImagePullPolicy: corev1.PullAlways, Args: []string{"--once"}},
				{Name: "sidecar", Image: busyboxImage, ImagePullPolicy: corev1.PullNever, Command: []string{"sh", "-c", termSidecar}},
			},
		},
	}
	// Without the pull secret (a dry run: nothing to clean up), the lookup
	// gets 401 and the Pod is admitted as it was, with the reason.
	bare := pod.DeepCopy()
	bare.Spec.ImagePullSecrets = nil
	got, err := kube.Client().CoreV1().Pods(s.ns).Create(s.ctx, bare, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatal(err)
	}
	if why := got.Annotations[inject.AnnotationSkipped]; !strings.Contains(why, "401") || len(got.Spec.InitContainers) > 0 || got.Spec.Containers[0].Command != nil {
		t.Errorf("without the pull secret: skipped %q, init containers %d, main's command %q", why, len(got.Spec.InitContainers), got.Spec.Containers[0].Command)
	}

	created, err := kube.Client().CoreV1().Pods(s.ns).Create(s.ctx, pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	effective := pod.Spec.DeepCopy()
	effective.Containers[0].Command = []string{appEntrypoint}
	expectLayout(t, created, *effective)
	done := s.waitPod(pod.Name, 3*time.Minute, podTerminal)
	expectPhase(t, done, corev1.PodSucceeded)
	expectExits(t, done, nil)
	expectLog(t, s, pod.Name, "main", "app: ENTRYPOINT ran with --once")
}

// TestWebhookNeverBlocks (issue 11): with the shipped failurePolicy
// (Ignore) and the webhook's --registry-timeout, job-signal never holds Pod
// creation up for long. A registry that never answers costs the registry
// timeout, one that is down costs nothing, and a stopped webhook nothing;
// each Pod is stored as it was sent, with the reason when the webhook could
// give one.
func TestWebhookNeverBlocks(t *testing.T) {
	t.Parallel()
	s := newSpace(t, "webhook-failopen", map[string]string{inject.LabelInject: "enabled"})
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

	create := func(pod *corev1.Pod) (*corev1.Pod, time.Duration) {
		t.Helper()
		start := time.Now()
		created, err := kube.Client().CoreV1().Pods(s.ns).Create(s.ctx, pod, metav1.CreateOptions{})
		took := time.Since(start)
		if err != nil {
			t.Fatalf("create Pod %s: %v (after %v)", pod.Name, err, took)
		}
		t.Logf("E2E_TIMING webhook_fail_open case=%s create_ms=%d", pod.Name, took.Milliseconds())
		return created, took
	}
	unchanged := func(p *corev1.Pod) bool {
		return len(p.Spec.InitContainers) == 0 && !inject.Injected(p.Annotations) &&
			slices.IndexFunc(p.Spec.Containers, func(c corev1.Container) bool { return len(c.Command) > 0 && c.Command[0] == inject.JobSignalPath }) < 0
	}
	// Bounds leave room for a loaded machine; the webhook's own answer (the
	// annotation) proves it answered before the API server's timeoutSeconds.
	for _, tc := range []struct {
		name, image, reason string
		min, max            time.Duration
	}{
		{"registry-silent", silent + "/app:1", "did not answer within " + registryTimeout.String(), registryTimeout, registryTimeout + 6*time.Second},
		{"registry-down", down + "/app:1", "connection refused", 0, 6 * time.Second},
	} {
		pod, took := create(gatedPod(tc.name, tc.image, nil))
		why := pod.Annotations[inject.AnnotationSkipped]
		if !unchanged(pod) || !strings.Contains(why, tc.reason) || took < tc.min || took > tc.max {
			t.Errorf("%s: created after %v (want %v to %v), unchanged %v, %s %q (want it to say %q)",
				tc.name, took, tc.min, tc.max, unchanged(pod), inject.AnnotationSkipped, why, tc.reason)
		}
	}
	hook.stop(t)
	pod, took := create(gatedPod("webhook-stopped", busyboxImage, []string{"/app"}))
	if !unchanged(pod) || pod.Annotations[inject.AnnotationSkipped] != "" || took > 6*time.Second {
		t.Errorf("with the webhook stopped: created after %v, unchanged %v, annotations %v", took, unchanged(pod), pod.Annotations)
	}
	// A webhook that accepts connections and never answers (hung, or a
	// black hole in front of it) costs each Pod the shipped timeoutSeconds,
	// then failurePolicy Ignore admits it unchanged.
	hangAt(t, hook.addr)
	timeout := time.Duration(*readShippedWebhook(t).config.Webhooks[0].TimeoutSeconds) * time.Second
	pod, took = create(gatedPod("webhook-hung", busyboxImage, []string{"/app"}))
	if !unchanged(pod) || pod.Annotations[inject.AnnotationSkipped] != "" || took < timeout-time.Second || took > timeout+6*time.Second {
		t.Errorf("with the webhook hung: created after %v (want about timeoutSeconds, %v), unchanged %v, annotations %v", took, timeout, unchanged(pod), pod.Annotations)
	}
}

// hangAt listens on addr and holds every connection open without a byte
// of answer, not even a TLS handshake, until the test ends.
func hangAt(t *testing.T, addr string) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen on the stopped webhook's address: %v", err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
}
