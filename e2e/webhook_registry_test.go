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
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
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

// TestWebhookLooksUpEntrypoint: a Pod labelled
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
	requireLoopback(t, "the API server calls the webhook this test serves on 127.0.0.1")
	reg := registry.Start(t, "puller", "s3cret")
	ref := reg.Host + "/private/app:1"
	pushAppImage(t, ref, &authn.Basic{Username: "puller", Password: "s3cret"})
	s := newSpace(t, "webhook-lookup")
	pullSecret(t, s, reg.Host, "puller", "s3cret")
	hook := startWebhook(t)
	enableNamespace(t, "--secrets-only", s.ns) // the webhook may read its Secrets; its Pods are labelled one by one
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

// pullSecret creates, in s's namespace, a dockerconfigjson Secret for
// reg's user.
func pullSecret(t *testing.T, s *space, host, user, password string) {
	t.Helper()
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	_, err := kube.Client().CoreV1().Secrets(s.ns).Create(s.ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "registry-pull"},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(fmt.Sprintf(
			`{"auths": {%q: {"username": %q, "password": %q, "auth": %q}}}`, host, user, password, auth))},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// TestWebhookPrivateImageAcrossNamespaces: a Pod only gets what its own
// credentials could fetch. A private image, referenced by digest, is
// looked up for a Pod of namespace A with A's pull secret (and its config
// cached); the same reference from namespace B, whose Pod has no secret,
// gets the registry's refusal, not A's ENTRYPOINT. In namespace C, which
// is labelled but not enabled with enable-namespace.sh, the webhook may
// not read the Pod's pull secret at all, and says how to enable it.
func TestWebhookPrivateImageAcrossNamespaces(t *testing.T) {
	t.Parallel()
	requireLoopback(t, "the API server calls the webhook this test serves on 127.0.0.1")
	reg := registry.Start(t, "puller", "s3cret")
	ref := reg.Host + "/private/app:1"
	basic := &authn.Basic{Username: "puller", Password: "s3cret"}
	pushAppImage(t, ref, basic)
	tag, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Head(tag, remote.WithAuth(basic))
	if err != nil {
		t.Fatal(err)
	}
	byDigest := reg.Host + "/private/app@" + desc.Digest.String()
	enabled := map[string]string{inject.LabelInject: "enabled"}
	a, b, c := newSpace(t, "webhook-ns-a", enabled), newSpace(t, "webhook-ns-b", enabled), newSpace(t, "webhook-ns-c", enabled)
	pullSecret(t, a, reg.Host, "puller", "s3cret")
	pullSecret(t, c, reg.Host, "puller", "s3cret")
	hook := startWebhook(t)
	enableNamespace(t, a.ns, b.ns)
	registerWebhook(t, hook.addr, a.ns, b.ns, c.ns)

	create := func(s *space, secret bool) *corev1.Pod {
		t.Helper()
		pod := gatedPod("app", byDigest, nil)
		if secret {
			pod.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry-pull"}}
		}
		got, err := kube.Client().CoreV1().Pods(s.ns).Create(s.ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			t.Fatalf("namespace %s: %v", s.ns, err)
		}
		return got
	}
	if got := create(a, true); !inject.Injected(got.Annotations) || !slices.Contains(got.Spec.Containers[0].Args, appEntrypoint) {
		t.Fatalf("namespace A, with its secret: not looked up: args %q, annotations %v", got.Spec.Containers[0].Args, got.Annotations)
	}
	got := create(b, false)
	if why := got.Annotations[inject.AnnotationSkipped]; !uninjected(got) || !strings.Contains(why, "401") || slices.Contains(got.Spec.Containers[0].Args, appEntrypoint) {
		t.Errorf("namespace B, without a secret: args %q, skipped %q: want the registry's refusal", got.Spec.Containers[0].Args, why)
	}
	got = create(c, true)
	if why := got.Annotations[inject.AnnotationSkipped]; !uninjected(got) || !strings.Contains(why, "enable-namespace.sh "+c.ns) {
		t.Errorf("namespace C, not enabled: skipped %q: want the secret unread, and how to enable the namespace", why)
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
