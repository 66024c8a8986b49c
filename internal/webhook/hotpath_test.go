package webhook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"

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

// BenchmarkManagedFields is the review of an application's Job Pod as
// the API server sends it, read whole against read without
// metadata.managedFields (the cut's own cost included), in turns of 20
// Pods in the same loop so that both see the same load: CPU per Pod
// each (whole-cpu-ns/op, cut-cpu-ns/op).
func BenchmarkManagedFields(b *testing.B) {
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(webhooktest.ReviewOf(b, webhooktest.APIServerAppJobPod()), &review); err != nil {
		b.Fatal(err)
	}
	cfg := &webhook.Config{Log: slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	raw := review.Request.Object.Raw
	if len(webhook.WithoutManagedFields(raw)) >= len(raw) {
		b.Fatal("nothing cut")
	}
	reads := [2]func([]byte) []byte{func(r []byte) []byte { return r }, webhook.WithoutManagedFields}
	var spent [2]time.Duration
	var pods [2]int
	for i := 0; b.Loop(); i++ {
		k := i / 20 % 2
		start := cpuTime(b)
		req := *review.Request
		req.Object.Raw = reads[k](raw)
		if resp := cfg.Review(context.Background(), &req); len(resp.Patch) == 0 {
			b.Fatalf("no patch: %+v", resp.Result)
		}
		spent[k] += cpuTime(b) - start
		pods[k]++
	}
	b.ReportMetric(float64(spent[0])/float64(max(pods[0], 1)), "whole-cpu-ns/op")
	b.ReportMetric(float64(spent[1])/float64(max(pods[1], 1)), "cut-cpu-ns/op")
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
