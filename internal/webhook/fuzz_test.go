package webhook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/resolve"
	"github.com/job-signal/job-signal/internal/testing/webhooktest"
	"github.com/job-signal/job-signal/internal/webhook"
)

// FuzzMutate sends arbitrary bodies to the /mutate handler: it answers
// 400 or an AdmissionReview that allows the Pod with a patch that applies
// to the object, never panics, and answers within its time limit.
func FuzzMutate(f *testing.F) {
	always := corev1.ContainerRestartPolicyAlways
	seeds := []*corev1.Pod{
		jobPod(container("export", "/export"), container("proxy", "/proxy")),
		jobPod(corev1.Container{Name: "job", Image: "127.0.0.1:1/tool:1", Args: []string{"$(X)"}}),
		jobPod(container("a", "/a")),
	}
	seeds[2].Spec.InitContainers = []corev1.Container{{Name: "mesh", Image: "x", RestartPolicy: &always}}
	seeds[2].Annotations = map[string]string{inject.Prefix + "wait-for": "mesh"}
	for _, p := range seeds {
		f.Add(webhooktest.ReviewOf(f, p))
	}
	f.Add([]byte(`{"request":{"uid":"x","kind":{"kind":"Pod","version":"v1"},"operation":"CREATE","object":{"spec":{"containers":null}}}}`))
	f.Add([]byte(`{"request":{"uid":"x","kind":{"kind":"Pod","version":"v1"},"operation":"CREATE","object":[]}}`))
	f.Add([]byte(`{}`))
	// Fuzzed image names may name any host: the registry client gets no
	// network at all, so a lookup fails at once.
	noNetwork := &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no network while fuzzing")
	}}
	cfg := &webhook.Config{Resolver: resolve.New(noNetwork, 16), RegistryTimeout: 200 * time.Millisecond, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	handler := cfg.Handler()
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := httptest.NewRecorder()
		done := make(chan struct{})
		go func() {
			defer close(done)
			handler.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mutate", bytes.NewReader(body)))
		}()
		select {
		case <-done:
		case <-time.After(webhook.RequestTimeout + 2*time.Second):
			buf := make([]byte, 1<<20)
			t.Fatalf("no answer after %s:\n%s", webhook.RequestTimeout+2*time.Second, buf[:runtime.Stack(buf, true)])
		}
		if rec.Code == http.StatusBadRequest {
			return
		}
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		var in, out admissionv1.AdmissionReview
		if err := json.Unmarshal(body, &in); err != nil {
			t.Fatalf("a body that is not a review was answered 200: %v", err)
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Response == nil {
			t.Fatalf("answer %s: %v", rec.Body, err)
		}
		if out.Response.UID != in.Request.UID || !out.Response.Allowed {
			t.Fatalf("answer %+v for uid %q", out.Response, in.Request.UID)
		}
		if out.Response.Patch != nil {
			webhooktest.Apply(t, in.Request.Object.Raw, out.Response)
		}
	})
}
