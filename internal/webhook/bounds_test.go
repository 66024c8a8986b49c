package webhook_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/job-signal/job-signal/internal/testing/hostileregistry"
	"github.com/job-signal/job-signal/internal/testing/webhooktest"
	"github.com/job-signal/job-signal/internal/webhook"
)

func decodeReview(t *testing.T, body []byte) *admissionv1.AdmissionResponse {
	t.Helper()
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil || review.Response == nil || review.APIVersion != "admission.k8s.io/v1" {
		t.Fatalf("not an AdmissionReview answer: %.300s (%v)", body, err)
	}
	return review.Response
}

// TestRequestBounds: a request over the size bound is answered without
// being read whole, as an AdmissionReview for its uid when the start of
// the body has one (an HTTP error otherwise), and a request beyond the
// bound on requests in flight gets a quick "busy" denial.
func TestRequestBounds(t *testing.T) {
	reg := hostileregistry.Start(t)
	s := webhooktest.Start(t, &webhook.Config{MaxInFlight: 1, RegistryTimeout: 5 * time.Second})
	big := jobPod(container("job", "/job"), container("proxy", "/proxy"))
	big.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "BIG", Value: strings.Repeat("x", 5<<20)}}
	review := webhooktest.ReviewOf(t, big)

	// With its length announced, and sent without one (chunked).
	for _, body := range []io.Reader{bytes.NewReader(review), io.MultiReader(bytes.NewReader(review))} {
		resp, err := s.Client.Post(s.URL+"/mutate", "application/json", body)
		if err != nil {
			t.Fatal(err)
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		r := decodeReview(t, answer)
		if r.UID != "uid-1" || !r.Allowed || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "over the bound") && !strings.Contains(r.Warnings[0], "more than") {
			t.Errorf("an oversized review: %+v", r)
		}
	}
	status, answer := s.Post(t, append([]byte(`{"junk":"`), bytes.Repeat([]byte("x"), 5<<20)...))
	if status != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized junk: status %d: %.200s", status, answer)
	}

	release := holdOneRequest(t, s, reg)
	resp := s.Answer(t, jobPod(container("job", "/job"), container("proxy", "/proxy")))
	release()
	if resp.Allowed || resp.Result == nil || resp.Result.Code != http.StatusTooManyRequests {
		t.Errorf("beyond the requests in flight: allowed %v, %+v", resp.Allowed, resp.Result)
	}
	checkReasons(t, resp, nil)
}

// TestMetrics: /metrics says, in the Prometheus text format, what the
// webhook did: admissions by outcome and reason class, lookups by result.
func TestMetrics(t *testing.T) {
	reg := hostileregistry.Start(t)
	s := webhooktest.Start(t, &webhook.Config{RegistryTimeout: time.Second})
	s.Review(t, jobPod(container("job", "/job"), container("proxy", "/proxy")))
	s.Review(t, lookupPod(reg.Image(hostileregistry.Honest)))
	s.Review(t, lookupPod(reg.Image(hostileregistry.Honest)))
	s.Review(t, lookupPod(reg.Image(hostileregistry.EndlessManifest)))
	s.Answer(t, lookupPod(reg.Image(hostileregistry.Unavailable)))
	resp, err := s.Client.Get(s.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	for _, want := range []string{
		`job_signal_webhook_admissions_total{outcome="injected",reason="none"} 3`,
		`job_signal_webhook_admissions_total{outcome="skipped",reason="image"} 1`,
		`job_signal_webhook_admissions_total{outcome="denied",reason="registry"} 1`,
		`job_signal_webhook_registry_lookups_seconds_count{result="fetched"} 1`,
		`job_signal_webhook_registry_lookups_seconds_count{result="cached"} 1`,
		`job_signal_webhook_registry_lookups_seconds_count{result="toolarge"} 1`,
		`job_signal_webhook_registry_lookups_seconds_count{result="server"} 1`,
		`job_signal_webhook_requests_in_flight 0`,
		`job_signal_webhook_injected_pods_total{form="pair",reason="unclassified"} 3`,
		`job_signal_webhook_injected_pods_total{form="native",reason="unclassified"} 0`,
		`process_resident_memory_bytes`,
	} {
		if !strings.Contains(string(text), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if t.Failed() {
		t.Logf("%s", text)
	}
}
