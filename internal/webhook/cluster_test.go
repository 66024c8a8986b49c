package webhook

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kong"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/job-signal/job-signal/inject"
)

// TestNextCheck: once the cluster is known, the next check is an interval
// away, failed or not (the last answer is kept); until then a failed check
// is tried again soon, twice as late each time, never later than the
// interval.
func TestNextCheck(t *testing.T) {
	const interval = 10 * time.Minute
	for _, tc := range []struct {
		known    bool
		failures int
		want     time.Duration
	}{
		{true, 0, interval},
		{true, 3, interval},
		{false, 0, interval}, // not reached: a good answer makes it known
		{false, 1, 5 * time.Second},
		{false, 2, 10 * time.Second},
		{false, 4, 40 * time.Second},
		{false, 7, 320 * time.Second},
		{false, 8, interval},
		{false, 1000, interval},
	} {
		if got := nextCheck(tc.known, tc.failures, interval); got != tc.want {
			t.Errorf("nextCheck(known %v, %d failures) = %s, want %s", tc.known, tc.failures, got, tc.want)
		}
	}
	if got := nextCheck(false, 3, time.Second); got != time.Second {
		t.Errorf("a short interval bounds the retries too: %s", got)
	}
}

// TestWatchCluster: the loop starts unknown (auto then gives the pair),
// takes a good answer, keeps it through a failed check, takes a changed
// one, and says so in the target, the metrics and the log; it ends with
// its context. Each check waits for the test to answer it, so that the
// test reads the loop's state between two checks.
func TestWatchCluster(t *testing.T) {
	var logs strings.Builder // read once the loop has ended
	c := &Config{Mode: inject.ModeAuto, Log: slog.New(slog.NewTextHandler(&logs, nil))}
	c.setup()
	type answer struct {
		cl  inject.Cluster
		err error
	}
	calls, answers := make(chan struct{}), make(chan answer)
	detect := func(ctx context.Context) (inject.Cluster, error) {
		select {
		case calls <- struct{}{}:
		case <-ctx.Done():
			return inject.Cluster{}, ctx.Err()
		}
		select {
		case a := <-answers:
			return a.cl, a.err
		case <-ctx.Done():
			return inject.Cluster{}, ctx.Err()
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		c.WatchCluster(ctx, detect, time.Millisecond)
		close(done)
	}()
	called := func() {
		t.Helper()
		select {
		case <-calls:
		case <-time.After(10 * time.Second):
			t.Fatal("the loop did not check the cluster within 10 s")
		}
	}
	// check answers the loop's check under way with a and waits until it
	// asks again: by then it has taken a in.
	check := func(a answer) {
		t.Helper()
		answers <- a
		called()
	}
	called()
	if got := c.target(); got.Mode != inject.ModeAuto || got.Cluster.Known {
		t.Errorf("before the first answer: %+v, want auto on an unknown cluster", got)
	}
	check(answer{err: errors.New("connection refused")})
	if got := c.target(); got.Cluster.Known {
		t.Errorf("after a failed first check: %+v, want the cluster still unknown", got)
	}
	native := inject.Cluster{Known: true, NativeSidecars: true, Version: "v1.37.2"}
	check(answer{cl: native})
	if got := c.target(); got.Cluster != native {
		t.Errorf("after a good answer: %+v, want %+v", got.Cluster, native)
	}
	wantMetrics(t, c, `job_signal_webhook_native_sidecars{version="v1.37.2"} 1`,
		`job_signal_webhook_cluster_checks_total{result="failed"} 1`, `job_signal_webhook_cluster_checks_total{result="ok"} 1`)
	check(answer{err: errors.New("timeout")})
	if got := c.target(); got.Cluster != native {
		t.Errorf("after a failed re-check: %+v, want the last answer %+v", got.Cluster, native)
	}
	wantMetrics(t, c, `job_signal_webhook_native_sidecars{version="v1.37.2"} 1`, `job_signal_webhook_cluster_checks_total{result="failed"} 2`)
	older := inject.Cluster{Known: true, Version: "v1.30.14"}
	check(answer{cl: older})
	if got := c.target(); got.Cluster != older {
		t.Errorf("after a changed answer: %+v, want %+v", got.Cluster, older)
	}
	wantMetrics(t, c, `job_signal_webhook_native_sidecars{version="v1.30.14"} 0`)
	if text := metricsText(t, c); strings.Contains(text, `version="v1.37.2"`) {
		t.Errorf("the old version's sample is still shown:\n%s", text)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("WatchCluster did not end within 10 s of its context")
	}
	for _, want := range []string{"could not check the cluster: until it answers", "cluster checked", "keeping its last answer", "nativeSidecars=false"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, logs.String())
		}
	}
}

// TestTargetDefault: a Config without a mode gives the pair.
func TestTargetDefault(t *testing.T) {
	c := &Config{}
	c.cluster.Store(&inject.Cluster{Known: true, NativeSidecars: true})
	if got := c.target(); got.Mode != inject.ModePair || !got.Cluster.NativeSidecars {
		t.Errorf("%+v", got)
	}
}

func metricsText(t *testing.T, c *Config) string {
	t.Helper()
	rec := httptest.NewRecorder()
	c.Metrics.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

func wantMetrics(t *testing.T, c *Config, want ...string) {
	t.Helper()
	text := metricsText(t, c)
	for _, w := range want {
		if !strings.Contains(text, w+"\n") {
			t.Errorf("/metrics lacks %s", w)
		}
	}
}

// TestModeFlags: --mode is read by inject.ParseMode (auto by default),
// --detect-interval must be positive; a wrong value is a usage error
// naming the flag, before anything starts.
func TestModeFlags(t *testing.T) {
	base := []string{"--tls-cert-file=/nonexistent/tls.crt", "--tls-key-file=/nonexistent/tls.key"}
	for _, tc := range []struct {
		args []string
		want string // in the error; empty: parsed
		mode inject.Mode
	}{
		{nil, "", inject.ModeAuto},
		{[]string{"--mode=Pair"}, "", inject.ModePair},
		{[]string{"--mode=native"}, "", inject.ModeNative},
		{[]string{"--mode=sidecars"}, "--mode", ""},
		{[]string{"--detect-interval=0s"}, "--detect-interval", ""},
	} {
		var c Cmd
		parser, err := kong.New(&c, kong.Vars{"image": "x"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = parser.Parse(append(base, tc.args...))
		switch {
		case tc.want == "" && (err != nil || c.mode != tc.mode):
			t.Errorf("%v: %v, mode %q; want mode %q", tc.args, err, c.mode, tc.mode)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: %v, want an error naming %s", tc.args, err, tc.want)
		}
	}
}

// TestOwnNamespace: where the dry run is asked: --namespace, else the
// kubeconfig context's namespace, else default, as kubectl reads it.
func TestOwnNamespace(t *testing.T) {
	dir := t.TempDir()
	write := func(name, namespace string) string {
		path := filepath.Join(dir, name)
		err := clientcmd.WriteToFile(clientcmdapi.Config{
			Clusters:       map[string]*clientcmdapi.Cluster{"c": {Server: "https://127.0.0.1:1"}},
			AuthInfos:      map[string]*clientcmdapi.AuthInfo{"u": {Token: "x"}},
			Contexts:       map[string]*clientcmdapi.Context{"x": {Cluster: "c", AuthInfo: "u", Namespace: namespace}},
			CurrentContext: "x",
		}, path)
		if err != nil {
			t.Fatal(err)
		}
		return path
	}
	withNS, without := write("with", "ops"), write("without", "")
	for _, tc := range []struct {
		cmd  Cmd
		want string
	}{
		{Cmd{Namespace: "job-signal-system", Kubeconfig: withNS}, "job-signal-system"},
		{Cmd{Kubeconfig: withNS}, "ops"},
		{Cmd{Kubeconfig: without}, "default"},
	} {
		if got, err := tc.cmd.ownNamespace(); err != nil || got != tc.want {
			t.Errorf("%+v: %q, %v; want %q", tc.cmd, got, err, tc.want)
		}
	}
}
