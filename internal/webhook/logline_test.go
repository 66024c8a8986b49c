package webhook_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/job-signal/job-signal/internal/testing/webhooktest"
	"github.com/job-signal/job-signal/internal/webhook"
)

// TestInjectedLine: the line an injected Pod gets says which request and
// Pod it is about, and what was done, each as a JSON string or number.
func TestInjectedLine(t *testing.T) {
	var logs bytes.Buffer
	cfg := &webhook.Config{Log: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	pod := webhooktest.APIServerAppJobPod()
	body := webhooktest.ReviewOf(t, pod)
	w := httptest.NewRecorder()
	cfg.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/mutate", bytes.NewReader(body)))
	if w.Code != http.StatusOK {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("want one line at info, got %d:\n%s", len(lines), logs.String())
	}
	var line map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &line); err != nil {
		t.Fatal(err)
	}
	var review struct {
		Request struct{ UID, Namespace, Name string }
	}
	if err := json.Unmarshal(body, &review); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"msg": "injected", "uid": review.Request.UID, "namespace": review.Request.Namespace,
		"name": review.Request.Name, "pod": pod.GenerateName + "*", "form": "pair", "warnings": 0.0} // the Pod has no name yet
	for k, v := range want {
		if line[k] != v {
			t.Errorf("%s: %#v, want %#v (the line: %s)", k, line[k], v, lines[0])
		}
	}
	for _, k := range []string{"reason", "class"} {
		if s, _ := line[k].(string); s == "" {
			t.Errorf("no %s: %s", k, lines[0])
		}
	}
}
