package webhook_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/job-signal/job-signal/internal/testing/webhooktest"
	"github.com/job-signal/job-signal/internal/webhook"
)

// TestMetricsListenerServesNoAdmission: the plain-HTTP metrics listener,
// which the Service exposes inside the cluster, answers /metrics and
// /healthz only: an AdmissionReview POSTed there (naming any namespace
// and its pull secrets) gets 404, never a patch.
func TestMetricsListenerServesNoAdmission(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := &webhook.Config{Log: log}
	srv, err := webhook.ListenMetrics("127.0.0.1:0", cfg, log)
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
	base := "http://" + srv.Addr()
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
