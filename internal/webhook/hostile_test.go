package webhook_test

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/pprof"
	"slices"
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

// TestStalledBodiesGiveWay: four connections that each send 1.25 MiB of
// a body they declare twice as long, then stall, fill the bytes the
// webhook holds of bodies; a Job's Pod reviewed beside them cuts one for
// room and is injected, instead of waiting for one to time out.
func TestStalledBodiesGiveWay(t *testing.T) {
	s := webhooktest.Start(t, &webhook.Config{})
	attack(t, s, 4, hostileclient.StalledBulk)
	waitUntil(t, 10*time.Second, "the stalled bodies fill the budget", func() bool {
		return metricValue(t, s, "job_signal_webhook_request_body_bytes") >= 4<<20
	})
	resp := s.Answer(t, jobPod(container("job", "/job"), container("proxy", "/proxy")))
	if !resp.Allowed || resp.Patch == nil {
		t.Fatalf("a Job's Pod beside four stalled bodies: allowed %v, %+v; want injected", resp.Allowed, resp.Result)
	}
	if cut := metricValue(t, s, "job_signal_webhook_request_bodies_cut_total"); cut < 1 {
		t.Errorf("%v stalled bodies cut: the Pod waited for one to time out", cut)
	}
}

// serverGoroutines counts the goroutines of the process's HTTP servers:
// each connection's, and any a request of it started.
func serverGoroutines(t *testing.T) int {
	t.Helper()
	var b strings.Builder
	if err := pprof.Lookup("goroutine").WriteTo(&b, 2); err != nil {
		t.Fatal(err)
	}
	n := 0
	for stack := range strings.SplitSeq(b.String(), "\n\n") {
		if strings.Contains(stack, "net/http.(*conn)") || strings.Contains(stack, "net/http.(*connReader)") {
			n++
		}
	}
	return n
}

// TestHostileClients: dozens of connections that hold the webhook as long
// as they can (a TLS handshake never finished, headers or a body a byte a
// second, a length declared and never sent, half a body and a stall),
// each opened again once cut, cost it a goroutine or two each, and those
// that send a body are cut, while Job Pods reviewed beside them are all
// injected. The e2e
// suite's TestWebhookHostileClients does it through the API server, with
// the figures.
func TestHostileClients(t *testing.T) {
	s := webhooktest.Start(t, &webhook.Config{})
	pod := jobPod(container("job", "/job"), container("proxy", "/proxy"))
	review := func() time.Duration {
		start := time.Now()
		resp := s.Answer(t, pod)
		took := time.Since(start)
		if !resp.Allowed || resp.Patch == nil {
			t.Fatalf("a Job's Pod: allowed %v, %+v; want injected", resp.Allowed, resp.Result)
		}
		return took
	}
	const n, pods = 4, 20
	var calm, attacked []time.Duration
	for range pods {
		calm = append(calm, review())
	}
	a := attack(t, s, n, hostileclient.Tricks...)
	held := n * len(hostileclient.Tricks)
	waitUntil(t, 20*time.Second, "every hostile connection opened", func() bool { return a.Opened() >= held })
	started := time.Now()
	// Reviews go on until the webhook has cut a connection of every trick
	// of the body (BodyTimeout, or a cut for room) at least once: all of
	// them are held throughout. Those before the headers are cut after
	// HeaderTimeout (10 s), or for a new one past maxWaitingConns:
	// TestWaitingConnectionsBounded.
	bodyTricks := []hostileclient.Trick{hostileclient.LyingLength, hostileclient.SlowBody, hostileclient.StalledBulk}
	allCut := func() bool {
		held := a.Held()
		for _, trick := range bodyTricks {
			if len(held[trick]) == 0 {
				return false
			}
		}
		return true
	}
	for !allCut() || len(attacked) < pods {
		attacked = append(attacked, review())
		if time.Since(started) > time.Minute {
			t.Fatalf("after a minute, the webhook has cut only %v", a.Held())
		}
	}
	// Each connection has its goroutine, and one more while a request's
	// body has been read (the server's read of what follows it); some open
	// or close between the two counts.
	open := func() int {
		n := 0.0
		for _, state := range []string{"waiting", "active", "idle"} {
			n += metricValue(t, s, `job_signal_webhook_connections{state="`+state+`"}`)
		}
		return int(n)
	}
	before := open()
	g := serverGoroutines(t)
	if most := 2*max(before, open()) + 4; g > most {
		t.Errorf("%d goroutines for %d connections open: more than two each", g, before)
	}
	for trick, times := range a.Held() {
		t.Logf("%s: %d cut, held %s to %s", trick, len(times), slices.Min(times), slices.Max(times))
	}
	t.Logf("%d hostile connections held; Job Pods reviewed: p50 %s, p99 %s of %d calm, p50 %s, p99 %s of %d beside them",
		held, percentile(calm, 50), percentile(calm, 99), len(calm), percentile(attacked, 50), percentile(attacked, 99), len(attacked))
}

func percentile(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

// TestWaitingConnectionsBounded: past 256 connections waiting for their
// first request the webhook closes the oldest for each new one; a Job's
// Pod reviewed beside them is injected. (conns_test.go holds the idle ones
// to the same rule.)
func TestWaitingConnectionsBounded(t *testing.T) {
	s := webhooktest.Start(t, &webhook.Config{})
	dropped := func() float64 {
		return metricValue(t, s, `job_signal_webhook_connections_dropped_total{state="waiting"}`)
	}
	const over = 300
	conns := make([]net.Conn, over)
	for i := range conns { // in order: the oldest are the first
		c, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "https://"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
	}
	waitUntil(t, 10*time.Second, "the oldest dropped", func() bool { return dropped() >= over-256 })
	if n := metricValue(t, s, `job_signal_webhook_connections{state="waiting"}`); n > 256 {
		t.Errorf("%v connections waiting", n)
	}
	conns[0].SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := conns[0].Read(make([]byte, 1)); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the oldest connection is not closed: %v", err)
	}
	resp := s.Answer(t, jobPod(container("job", "/job"), container("proxy", "/proxy")))
	if !resp.Allowed || resp.Patch == nil {
		t.Fatalf("a Job's Pod: allowed %v, %+v; want injected", resp.Allowed, resp.Result)
	}
}

// TestHTTP1Only: a client that offers HTTP/2 gets HTTP/1.1, the protocol
// the API server calls a webhook behind a Service with: one request at a
// time on a connection, never hundreds of streams.
func TestHTTP1Only(t *testing.T) {
	s := webhooktest.Start(t, &webhook.Config{})
	config := s.Client.Transport.(*http.Transport).TLSClientConfig.Clone()
	config.ServerName, config.NextProtos = "127.0.0.1", []string{"h2", "http/1.1"}
	c, err := tls.Dial("tcp", strings.TrimPrefix(s.URL, "https://"), config)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if p := c.ConnectionState().NegotiatedProtocol; p != "http/1.1" {
		t.Errorf("negotiated %q, want http/1.1", p)
	}
}
