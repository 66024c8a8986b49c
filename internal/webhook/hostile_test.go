package webhook_test

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/job-signal/job-signal/internal/testing/hostileclient"
	"github.com/job-signal/job-signal/internal/testing/webhooktest"
	"github.com/job-signal/job-signal/internal/webhook"
)

// metricValue is a sample's value at s's /metrics (its name and labels
// as the text format writes them), or -1 when it has none.
func metricValue(t *testing.T, s *webhooktest.Server, sample string) float64 {
	t.Helper()
	resp, err := s.Client.Get(s.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	text, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(text)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), sample+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	return -1
}

// waitUntil polls cond until it holds, failing the test after timeout:
// what it waits for (a gauge, connections opened) has no event to wait on.
func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// attack starts n hostile connections of each trick to s, stopped when
// the test ends.
func attack(t *testing.T, s *webhooktest.Server, n int, tricks ...hostileclient.Trick) *hostileclient.Attack {
	t.Helper()
	a := hostileclient.Start(strings.TrimPrefix(s.URL, "https://"), "/mutate",
		s.Client.Transport.(*http.Transport).TLSClientConfig, n, tricks...)
	t.Cleanup(a.Stop)
	return a
}

// TestLyingClientsDoNotStarve: two connections that declare 2.5 MiB of
// body and send one byte cost the webhook what they sent, not what they
// declared: a Job's Pod that comes while they hold their connections open
// is injected, not answered busy.
func TestLyingClientsDoNotStarve(t *testing.T) {
	s := webhooktest.Start(t, &webhook.Config{})
	a := attack(t, s, 2, hostileclient.LyingLength)
	waitUntil(t, 10*time.Second, "the server reads both lying requests", func() bool {
		return metricValue(t, s, "job_signal_webhook_requests_in_flight") == 2
	})
	resp := s.Answer(t, jobPod(container("job", "/job"), container("proxy", "/proxy")))
	if !resp.Allowed || resp.Patch == nil {
		t.Fatalf("a Job's Pod beside two lying clients: allowed %v, %+v; want injected", resp.Allowed, resp.Result)
	}
	if err := a.Err(); err != nil {
		t.Fatalf("the attack could not connect: %v", err)
	}
}
