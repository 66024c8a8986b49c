package webhook_test

import (
	"crypto/tls"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/testing/testcert"
	"github.com/job-signal/job-signal/internal/testing/webhooktest"
	"github.com/job-signal/job-signal/internal/webhook"
)

func TestDecide(t *testing.T) {
	job := []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "j"}}
	rs := []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "r"}}
	for _, tc := range []struct {
		name   string
		meta   metav1.ObjectMeta
		inject bool
	}{
		{"a Job's Pod", metav1.ObjectMeta{OwnerReferences: job}, true},
		{"a ReplicaSet's Pod", metav1.ObjectMeta{OwnerReferences: rs}, false},
		{"a bare Pod", metav1.ObjectMeta{}, false},
		{"a bare Pod labelled enabled", metav1.ObjectMeta{Labels: map[string]string{inject.LabelInject: "enabled"}}, true},
		{"a Job's Pod labelled disabled", metav1.ObjectMeta{OwnerReferences: job, Labels: map[string]string{inject.LabelInject: "disabled"}}, false},
		{"a Job's Pod injected already (by the CLI): inject again, a no-op", metav1.ObjectMeta{OwnerReferences: job, Annotations: map[string]string{inject.AnnotationInjected: "{}"}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, class, why := webhook.Decide(&corev1.Pod{ObjectMeta: tc.meta})
			if got != tc.inject || !got && (why == "" || class == "") {
				t.Errorf("Decide = %v %q %q, want %v and a reason when false", got, class, why, tc.inject)
			}
		})
	}
}

func TestMutate(t *testing.T) {
	s := webhooktest.Start(t, &webhook.Config{RegistryTimeout: time.Second})

	// A Job's Pod is injected: init container first, commands wrapped.
	after, resp := s.Review(t, jobPod(container("export", "/export"), container("proxy", "/proxy")))
	if len(after.Spec.InitContainers) != 1 || after.Spec.InitContainers[0].Name != inject.InitContainer {
		t.Fatalf("init containers %v", after.Spec.InitContainers)
	}
	if c := after.Spec.Containers[1]; c.Command[0] != inject.SidecarWatchPath || c.Args[0] != "/proxy" {
		t.Errorf("sidecar %q %q", c.Command, c.Args)
	}
	if !inject.Injected(after.Annotations) || len(resp.Warnings) != 0 {
		t.Errorf("annotations %v warnings %v", after.Annotations, resp.Warnings)
	}

	// Injecting the result again changes nothing...
	if _, resp := s.Review(t, after); resp.Patch != nil {
		t.Errorf("an injected Pod was patched again: %s", resp.Patch)
	}
	// ...also when the API server calls again (reinvocationPolicy
	// IfNeeded) after changing what the webhook added: defaults filled in,
	// the ServiceAccount admission (run again) mounted the API token into
	// the install container as it had into the others before the first
	// call, and another webhook renamed the install image to a mirror.
	token := corev1.VolumeMount{Name: "kube-api-access-x1y2z", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}
	sent := jobPod(container("export", "/export"), container("proxy", "/proxy"))
	sent.Spec.Volumes = []corev1.Volume{{Name: token.Name}}
	for i := range sent.Spec.Containers {
		sent.Spec.Containers[i].VolumeMounts = []corev1.VolumeMount{token}
	}
	first, _ := s.Review(t, sent)
	install := &first.Spec.InitContainers[0]
	install.VolumeMounts = append(install.VolumeMounts, token)
	install.Image = "mirror.example/job-signal:v0.1.0"
	install.TerminationMessagePath, install.ImagePullPolicy = "/dev/termination-log", corev1.PullIfNotPresent
	if _, resp := s.Review(t, first); resp.Patch != nil {
		t.Errorf("the second call undid other admission plugins' changes: %s", resp.Patch)
	}
	// ...unless another webhook added a container since (reinvocation):
	// that one is wrapped too.
	after.Spec.Containers = append(after.Spec.Containers, container("mesh", "/mesh"))
	again, _ := s.Review(t, after)
	if c := again.Spec.Containers[2]; c.Command[0] != inject.SidecarWatchPath || len(again.Spec.InitContainers) != 1 {
		t.Errorf("reinvoked: %q, %d init containers", c.Command, len(again.Spec.InitContainers))
	}

	// Another owner's Pod passes untouched.
	other := jobPod(container("web", "/web"))
	other.OwnerReferences[0].Kind = "ReplicaSet"
	if _, resp := s.Review(t, other); resp.Patch != nil {
		t.Errorf("a ReplicaSet's Pod was patched: %s", resp.Patch)
	}

	// A labelled Pod with no sidecar passes untouched, command or not.
	alone := jobPod(container("job", "/job"))
	alone.OwnerReferences = nil
	alone.Labels = map[string]string{inject.LabelInject: "enabled"}
	if _, resp := s.Review(t, alone); resp.Patch != nil || len(resp.Warnings) > 0 {
		t.Errorf("a Pod with no sidecar was patched: %s %q", resp.Patch, resp.Warnings)
	}

	// A labelled Pod the transformation refuses is admitted, annotated.
	bare := jobPod(container("job", "/job"), container("proxy", "/proxy"))
	bare.OwnerReferences = nil
	bare.Labels = map[string]string{inject.LabelInject: "enabled"}
	bare.Spec.OS = &corev1.PodOS{Name: corev1.Windows}
	after, resp = s.Review(t, bare)
	if why := after.Annotations[inject.AnnotationSkipped]; !strings.Contains(why, "windows") || len(resp.Warnings) == 0 {
		t.Errorf("skipped %q, warnings %v", why, resp.Warnings)
	}
	if len(after.Spec.InitContainers) != 0 || after.Spec.Containers[0].Command[0] != "/job" {
		t.Errorf("a refused Pod was changed: %+v", after.Spec)
	}

	// A Pod that cannot need job-signal is left as it is, as the
	// registration and the busy path leave it: one container, even with a
	// command, or restartPolicy Always, even labelled enabled.
	always := jobPod(container("web", "/web"), container("proxy", "/proxy"))
	always.OwnerReferences = nil
	always.Labels = map[string]string{inject.LabelInject: "enabled"}
	always.Spec.RestartPolicy = corev1.RestartPolicyAlways
	for _, p := range []*corev1.Pod{jobPod(container("job", "/job")), always} {
		if _, resp := s.Review(t, p); resp.Patch != nil || len(resp.Warnings) > 0 {
			t.Errorf("%d containers, restartPolicy %s: patch %s, warnings %q", len(p.Spec.Containers), p.Spec.RestartPolicy, resp.Patch, resp.Warnings)
		}
	}
}

// TestRegistryDownOrSlow: a Pod with a sidecar whose main container's
// ENTRYPOINT must be looked up in a registry that never answers, or
// refuses connections, is denied for now (the Job controller creates it
// again), saying why, after at most the registry timeout.
func TestRegistryDownOrSlow(t *testing.T) {
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() { // accepts and never answers
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	closedAddr := closed.Addr().String()
	closed.Close()

	const timeout = 500 * time.Millisecond
	s := webhooktest.Start(t, &webhook.Config{RegistryTimeout: timeout})
	for _, registry := range []string{silent.Addr().String(), closedAddr} {
		pod := jobPod(corev1.Container{Name: "job", Image: registry + "/tool:1", Args: []string{"run"}}, container("proxy", "/proxy"))
		start := time.Now()
		resp := s.Answer(t, pod)
		elapsed := time.Since(start)
		if resp.Allowed || resp.Result == nil || resp.Result.Code != 503 || !strings.Contains(resp.Result.Message, "ENTRYPOINT") {
			t.Errorf("%s: allowed %v, %+v", registry, resp.Allowed, resp.Result)
		}
		if elapsed > timeout+5*time.Second {
			t.Errorf("%s: answered after %s, registry timeout %s", registry, elapsed, timeout)
		}
		t.Logf("%s: denied for now after %s: %s", registry, elapsed.Round(time.Millisecond), resp.Result.Message)
	}
}

// TestCertificateReload: a new certificate in the files is served on the
// next handshake, without a restart.
func TestCertificateReload(t *testing.T) {
	s := webhooktest.Start(t, &webhook.Config{})
	commonName := func() string {
		conn, err := tls.Dial("tcp", strings.TrimPrefix(s.URL, "https://"), &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].Subject.CommonName
	}
	if cn := commonName(); cn != "first" {
		t.Fatalf("serving %q", cn)
	}
	// Modification times may be coarse: make sure the new files differ.
	old := time.Now().Add(-time.Minute)
	os.Chtimes(s.CertFile, old, old)
	if _, err := testcert.Write(s.CertFile, s.KeyFile, "second"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for commonName() != "second" {
		if time.Now().After(deadline) {
			t.Fatal("the new certificate is not served 10 s after it was written")
		}
	}
	resp, err := s.Client.Get(s.URL + "/healthz")
	if err == nil {
		resp.Body.Close()
		t.Error("the old CA still verifies: the test did not change the certificate")
	}
}
