package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/job-signal/job-signal/internal/resolve"
	"github.com/job-signal/job-signal/internal/testcert"
)

// writeCert writes a self-signed certificate for 127.0.0.1 named cn.
func writeCert(t *testing.T, certFile, keyFile, cn string) *x509.Certificate {
	t.Helper()
	cert, err := testcert.Write(certFile, keyFile, cn)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// server is a real job-signal-webhook server on 127.0.0.1, stopped at the
// end of the test.
type server struct {
	url    string
	client *http.Client
	dir    string
}

func startServer(t *testing.T, cfg *Config) *server {
	t.Helper()
	dir := t.TempDir()
	cert := writeCert(t, filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"), "first")
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Resolver == nil {
		cfg.Resolver = resolve.New(nil, 16)
	}
	srv, err := Listen("127.0.0.1:0", filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"), cfg, cfg.Log)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve() }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	return &server{url: "https://" + srv.Addr(), client: client, dir: dir}
}

// jobPod is a Pod as the Job controller creates it.
func jobPod(containers ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{GenerateName: "export-", Namespace: "jobs",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "export", UID: "u1"}}},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: containers},
	}
}

func reviewOf(t testing.TB, pod *corev1.Pod) []byte {
	raw, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: types.UID("uid-1"), Operation: admissionv1.Create, Namespace: pod.Namespace,
			Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}, Resource: metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
			Object: runtimeRaw(raw)},
	})
	return b
}

// post sends a review and returns the Pod the API server would store.
func (s *server) post(t *testing.T, pod *corev1.Pod) (*corev1.Pod, *admissionv1.AdmissionResponse) {
	t.Helper()
	resp, err := s.client.Post(s.url+"/mutate", "application/json", bytes.NewReader(reviewOf(t, pod)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %s: %s", resp.Status, body)
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil || review.Response == nil {
		t.Fatalf("response %s: %v", body, err)
	}
	return applyResponse(t, pod, review.Response), review.Response
}

// applyResponse applies the response's patch as the API server does (with
// the same JSON Patch library).
func applyResponse(t testing.TB, pod *corev1.Pod, resp *admissionv1.AdmissionResponse) *corev1.Pod {
	raw, _ := json.Marshal(pod)
	out := applyPatch(t, raw, resp)
	var after corev1.Pod
	if err := json.Unmarshal(out, &after); err != nil {
		t.Fatalf("patched Pod: %v", err)
	}
	return &after
}

func applyPatch(t testing.TB, raw []byte, resp *admissionv1.AdmissionResponse) []byte {
	if !resp.Allowed {
		t.Fatalf("Pod not allowed: %+v", resp.Result)
	}
	if resp.Patch == nil {
		return raw
	}
	patch, err := jsonpatch.DecodePatch(resp.Patch)
	if err != nil {
		t.Fatalf("patch %s: %v", resp.Patch, err)
	}
	out, err := patch.Apply(raw)
	if err != nil {
		t.Fatalf("patch %s does not apply: %v", resp.Patch, err)
	}
	return out
}

func runtimeRaw(b []byte) runtime.RawExtension { return runtime.RawExtension{Raw: b} }
