//go:build e2e

package e2e

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/job-signal/job-signal/e2e/cluster"
	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/testing/webhooktest"
)

// Who may ask the webhook for admission: the API server, over TLS; with
// --client-ca-file, only a client presenting a certificate of that CA.

// post sends body to url with client and returns the status, or the error.
func post(client *http.Client, url string, body []byte) (int, error) {
	resp, err := client.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, nil
}

// TestWebhookMetricsPort: the webhook as the chart installs it serves
// metrics over plain HTTP too (the metrics port, 9090): there /metrics
// and /healthz answer, and an AdmissionReview POSTed to /mutate gets 404,
// while the API server's calls on the HTTPS port inject. Reached through
// the API server's proxy to the Pod, so the NetworkPolicy is off: it lets
// only labelled namespaces reach that port, and the API server is in none.
func TestWebhookMetricsPort(t *testing.T) {
	t.Parallel()
	s := newSpace(t, "webhook-metrics")
	hook := installChart(t, []string{s.ns}, "replicaCount=1", "networkPolicy.enabled=false") // returns once the API server's call injected a Pod
	pod := hook.pods()[0].Name
	proxy := func(verb, path string, body []byte) ([]byte, int, error) {
		req := kube.Client().CoreV1().RESTClient().Verb(verb).Namespace(hook.namespace).Resource("pods").
			Name("http:" + pod + ":9090").SubResource("proxy").Suffix(path)
		if body != nil {
			req = req.Body(body).SetHeader("Content-Type", "application/json")
		}
		var code int
		out, err := req.Do(s.ctx).StatusCode(&code).Raw()
		return out, code, err
	}
	review := webhooktest.ReviewOf(t, gatedPod("probe", busyboxImage, []string{"/app"}))
	// The proxy gives the Pod's 404 back as an error of that kind.
	if _, code, err := proxy("POST", "mutate", review); code != http.StatusNotFound && !apierrors.IsNotFound(err) {
		t.Errorf("POST /mutate on the metrics port: %d (%v); want 404", code, err)
	}
	for _, path := range []string{"metrics", "healthz"} {
		body, code, _ := proxy("GET", path, nil)
		if code != http.StatusOK || path == "metrics" && !strings.Contains(string(body), `job_signal_webhook_admissions_total{outcome="injected"`) {
			t.Errorf("GET /%s on the metrics port: %d: %.300s", path, code, body)
		}
	}
}

// TestWebhookClientCertificate: the API server runs with an admission
// configuration whose kubeconfig presents a client certificate (of a CA
// of its own) to the webhook at cluster.WebhookClientAddr, as the README
// tells an operator to. The webhook there, with --client-ca-file, injects
// the Pods the API server sends it; the same AdmissionReview from a client
// without a certificate gets 403, and one with the cluster CA's admin
// certificate fails the handshake.
func TestWebhookClientCertificate(t *testing.T) {
	t.Parallel()
	s := newSpace(t, "webhook-mtls", map[string]string{inject.LabelInject: "enabled"})
	hook := startWebhook(t, "--listen="+cluster.WebhookClientAddr, "--client-ca-file="+kube.WebhookClientCA())
	registerWebhook(t, hook.addr, s.ns) // returns once the API server's call injected a Pod
	pod, err := kube.Client().CoreV1().Pods(s.ns).Create(s.ctx, gatedPod("mtls", busyboxImage, []string{"/app"}), metav1.CreateOptions{})
	if err != nil || !inject.Injected(pod.Annotations) {
		t.Fatalf("created through the webhook requiring client certificates: %v, annotations %v", err, pod.GetAnnotations())
	}
	for _, e := range hook.events(t) {
		if strings.HasPrefix(e.Msg, "refused a request without a client certificate") {
			t.Errorf("the webhook refused a request of the API server: %+v", e)
		}
	}

	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(hook.ca)
	review := webhooktest.ReviewOf(t, gatedPod("probe", busyboxImage, []string{"/app"}))
	url := "https://" + hook.addr + "/mutate"
	anonymous := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	if code, err := post(anonymous, url, review); code != http.StatusForbidden {
		t.Errorf("without a client certificate: %d, %v; want 403", code, err)
	}
	pki := filepath.Dir(kube.WebhookClientCA())
	admin, err := tls.LoadX509KeyPair(filepath.Join(pki, "admin.crt"), filepath.Join(pki, "admin.key"))
	if err != nil {
		t.Fatal(err)
	}
	// Presented whatever CAs the server names (Go's client would otherwise
	// send none, as no named CA signed it, and get the 403 above).
	present := func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &admin, nil }
	other := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, GetClientCertificate: present}}}
	if code, err := post(other, url, review); err == nil {
		t.Errorf("with the cluster CA's admin certificate: %d, want the handshake refused", code)
	}
}
