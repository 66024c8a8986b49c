package webhook_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/job-signal/job-signal/internal/testing/webhooktest"
	"github.com/job-signal/job-signal/internal/webhook"
)

// reviews are the two AdmissionReviews the API server sends for one Pod
// of a Job with a sidecar: the first call, and the call again after the
// ServiceAccount admission mounted its token into the install container.
func reviews(b *testing.B) (first, again []byte) {
	s := webhooktest.Start(b, &webhook.Config{})
	pod := webhooktest.APIServerPod()
	after, _ := s.Review(b, pod)
	return webhooktest.ReviewOf(b, pod), webhooktest.ReviewOf(b, webhooktest.CalledAgain(after))
}

// BenchmarkServeMutate is the webhook's handling of both calls for one
// Pod, without the network: where its CPU goes per injected Pod; and of
// the one call for an application's Job Pod (app).
func BenchmarkServeMutate(b *testing.B) {
	first, again := reviews(b)
	cfg := &webhook.Config{Log: slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	h := cfg.Handler()
	serve := func(body []byte) {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/mutate", bytes.NewReader(body)))
		if w.Code != http.StatusOK || !json.Valid(w.Body.Bytes()) {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
	for _, calls := range []struct {
		name   string
		bodies [][]byte
	}{{"both", [][]byte{first, again}}, {"first", [][]byte{first}}, {"again", [][]byte{again}},
		// An application's Job Pod, as the API server sends it: larger, and
		// with the managedFields the Job controller's create left.
		{"app", [][]byte{webhooktest.ReviewOf(b, webhooktest.APIServerAppJobPod())}}} {
		b.Run(calls.name, func(b *testing.B) {
			b.ReportAllocs()
			start := cpuTime(b)
			for b.Loop() {
				for _, body := range calls.bodies {
					serve(body)
				}
			}
			b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the process's CPU time so far, user and system: on a
// machine shared with other work, what a benchmark's wall time is not.
func cpuTime(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
