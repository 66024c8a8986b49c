package webhook_test

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/job-signal/job-signal/internal/testing/testcert"
	"github.com/job-signal/job-signal/internal/testing/webhooktest"
	"github.com/job-signal/job-signal/internal/webhook"
)

// TestMetricsListenerServesNoAdmission: the plain-HTTP metrics listener,
// which the Service exposes inside the cluster, answers /metrics and
// /healthz only: an AdmissionReview POSTed there (naming any namespace
// and its pull secrets) gets 404, never a patch.
func TestMetricsListenerServesNoAdmission(t *testing.T) {
	base := webhooktest.StartMetrics(t, &webhook.Config{})
	client := &http.Client{Timeout: 10 * time.Second}
	review := webhooktest.ReviewOf(t, jobPod(container("job", "/job"), container("proxy", "/proxy")))
	resp, err := client.Post(base+"/mutate", "application/json", bytes.NewReader(review))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("POST /mutate on the metrics listener: status %d, want 404: %.200s", resp.StatusCode, body)
	}
	for _, path := range []string{"/metrics", "/healthz"} {
		resp, err := client.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: status %d", path, resp.StatusCode)
		}
	}
}

// TestClientCertificates: with --client-ca-file, the HTTPS listener
// answers /mutate and /metrics only to a client presenting a certificate
// signed by that CA (the API server, configured to); without one, 403; a
// certificate of another CA fails the handshake. /healthz stays open for
// the kubelet's probes, which present none.
func TestClientCertificates(t *testing.T) {
	dir := t.TempDir()
	caFile, caKey := filepath.Join(dir, "apiserver.crt"), filepath.Join(dir, "apiserver.key")
	if _, err := testcert.WriteClient(caFile, caKey, "kube-apiserver"); err != nil {
		t.Fatal(err)
	}
	otherFile, otherKey := filepath.Join(dir, "other.crt"), filepath.Join(dir, "other.key")
	if _, err := testcert.WriteClient(otherFile, otherKey, "stranger"); err != nil {
		t.Fatal(err)
	}
	s := webhooktest.Start(t, &webhook.Config{ClientCAFile: caFile})
	serving, err := os.ReadFile(s.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(serving)
	client := func(certFile, keyFile string) *http.Client {
		cfg := &tls.Config{RootCAs: roots}
		if certFile != "" {
			pair, err := tls.LoadX509KeyPair(certFile, keyFile)
			if err != nil {
				t.Fatal(err)
			}
			// Presented whatever CAs the server names: Go's client
			// would otherwise send none where no named CA signed it.
			cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &pair, nil }
		}
		return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
	}
	review := webhooktest.ReviewOf(t, jobPod(container("job", "/job"), container("proxy", "/proxy")))
	do := func(c *http.Client, method, path string) (int, error) {
		req, _ := http.NewRequest(method, s.URL+path, bytes.NewReader(review))
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		return resp.StatusCode, nil
	}
	for _, tc := range []struct {
		name         string
		client       *http.Client
		method, path string
		want         int // 0: the handshake fails
	}{
		{"the API server's certificate", client(caFile, caKey), "POST", "/mutate", http.StatusOK},
		{"the API server's certificate, metrics", client(caFile, caKey), "GET", "/metrics", http.StatusOK},
		{"no certificate", client("", ""), "POST", "/mutate", http.StatusForbidden},
		{"no certificate, metrics", client("", ""), "GET", "/metrics", http.StatusForbidden},
		{"no certificate, the kubelet's probe", client("", ""), "GET", "/healthz", http.StatusOK},
		{"another CA's certificate", client(otherFile, otherKey), "POST", "/mutate", 0},
	} {
		code, err := do(tc.client, tc.method, tc.path)
		if code != tc.want || (tc.want == 0) != (err != nil) {
			t.Errorf("%s: %s %s: status %d, %v; want %d", tc.name, tc.method, tc.path, code, err, tc.want)
		}
	}
}
