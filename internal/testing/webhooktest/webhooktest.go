// Package webhooktest runs the real job-signal-webhook server on 127.0.0.1
// for tests, and reviews Pods through it as the API server would.
package webhooktest

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

	"github.com/job-signal/job-signal/internal/resolve"
	"github.com/job-signal/job-signal/internal/testing/testcert"
	"github.com/job-signal/job-signal/internal/webhook"
)

// Server is a webhook server started by a test and shut down at its end.
type Server struct {
	URL    string // https://127.0.0.1:PORT
	Client *http.Client
	// CertFile and KeyFile are the serving certificate's files, which a
	// test may rewrite.
	CertFile, KeyFile string
}

// Start serves cfg (logs discarded, a small resolver when none) with a
// certificate named "first".
func Start(t testing.TB, cfg *webhook.Config) *Server {
	t.Helper()
	dir := t.TempDir()
	s := &Server{CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key")}
	cert, err := testcert.Write(s.CertFile, s.KeyFile, "first")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Resolver == nil {
		cfg.Resolver = resolve.New(nil, 16)
	}
	srv, err := webhook.Listen("127.0.0.1:0", s.CertFile, s.KeyFile, cfg, cfg.Log)
	if err != nil {
		t.Fatal(err)
	}
	serve(t, srv)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	s.URL = "https://" + srv.Addr()
	s.Client = &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	return s
}

// StartMetrics serves cfg's plain-HTTP listener of metrics and health
// checks (webhook.ListenMetrics) on 127.0.0.1 until the test ends, and
// returns its URL, http://127.0.0.1:PORT.
func StartMetrics(t testing.TB, cfg *webhook.Config) string {
	t.Helper()
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	srv, err := webhook.ListenMetrics("127.0.0.1:0", cfg, cfg.Log)
	if err != nil {
		t.Fatal(err)
	}
	serve(t, srv)
	return "http://" + srv.Addr()
}

// serve serves srv until the test ends.
func serve(t testing.TB, srv *webhook.Server) {
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
}

// ReviewOf is the AdmissionReview the API server sends when pod is
// created.
func ReviewOf(t testing.TB, pod *corev1.Pod) []byte {
	b, err := ReviewBody(pod)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ReviewBody is ReviewOf for a caller without a testing.TB.
func ReviewBody(pod *corev1.Pod) ([]byte, error) {
	raw, err := json.Marshal(pod)
	if err != nil {
		return nil, err
	}
	return json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: "uid-1", Operation: admissionv1.Create, Namespace: pod.Namespace,
			Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}, Resource: metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
			Object: runtime.RawExtension{Raw: raw}},
	})
}

// Review sends pod's creation to /mutate and returns the Pod the API
// server would store, and the response; it fails the test if the Pod is
// not allowed.
func (s *Server) Review(t testing.TB, pod *corev1.Pod) (*corev1.Pod, *admissionv1.AdmissionResponse) {
	t.Helper()
	resp := s.Answer(t, pod)
	raw, _ := json.Marshal(pod)
	var after corev1.Pod
	if err := json.Unmarshal(Apply(t, raw, resp), &after); err != nil {
		t.Fatalf("patched Pod: %v", err)
	}
	return &after, resp
}

// Answer sends pod's creation to /mutate and returns the response,
// allowed or not.
func (s *Server) Answer(t testing.TB, pod *corev1.Pod) *admissionv1.AdmissionResponse {
	t.Helper()
	status, body := s.Post(t, ReviewOf(t, pod))
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil || review.Response == nil {
		t.Fatalf("response %s: %v", body, err)
	}
	if review.APIVersion != "admission.k8s.io/v1" || review.Kind != "AdmissionReview" {
		t.Fatalf("the answer is not an admission.k8s.io/v1 AdmissionReview: %s", body)
	}
	return review.Response
}

// Post sends body to /mutate and returns the status and the answer.
func (s *Server) Post(t testing.TB, body []byte) (int, []byte) {
	t.Helper()
	resp, err := s.Client.Post(s.URL+"/mutate", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, answer
}

// Apply applies the response's patch to raw as the API server does, with
// the same JSON Patch library; it fails the test if the Pod is not
// allowed or the patch does not apply.
func Apply(t testing.TB, raw []byte, resp *admissionv1.AdmissionResponse) []byte {
	t.Helper()
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
