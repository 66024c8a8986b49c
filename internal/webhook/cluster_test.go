// The loop that owns what the cluster offers, through its versions and Nodes: long because each change a cluster
// goes through is a case.

package webhook

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alecthomas/kong"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/testing/syncbuf"
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

// testNodes is a NodeSource the test sets: the Nodes, whether listed, and
// unbuffered channels, so that a send returns once the loop has taken it.
type testNodes struct {
	mu      sync.Mutex
	nodes   []inject.Node
	synced  bool
	changed chan struct{}
	errs    chan error
}

func (n *testNodes) Run(ctx context.Context) {}
func (n *testNodes) List() ([]inject.Node, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.nodes), n.synced
}
func (n *testNodes) Changed() <-chan struct{} { return n.changed }
func (n *testNodes) Errors() <-chan error     { return n.errs }

// TestWatchCluster: the loop starts unknown (auto then gives the pair),
// decides nothing before both the API server's version and the Nodes are
// read, then decides with inject.ClusterFrom as the version and the Nodes
// change: a Node that joins with an old kubelet holds native sidecars
// back, logged by name with the count in the metrics, and is logged again
// when it leaves. A failed version check keeps the last answer; a failed
// Node watch is logged and counted. It ends with its context.
func TestWatchCluster(t *testing.T) {
	var logs syncbuf.Buffer
	c := &Config{Mode: inject.ModeAuto, Log: slog.New(slog.NewTextHandler(&logs, nil))}
	c.setup()
	nodes := &testNodes{changed: make(chan struct{}), errs: make(chan error)}
	var mu sync.Mutex
	version, versionErr := "", errors.New("connection refused")
	asked := make(chan struct{}, 1)
	src := ClusterSource{Nodes: nodes, Version: func(ctx context.Context) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		select {
		case asked <- struct{}{}:
		default:
		}
		return version, versionErr
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		c.WatchCluster(ctx, src, time.Millisecond)
		close(done)
	}()
	send := func(ch any) {
		t.Helper()
		var ok bool
		switch ch := ch.(type) {
		case chan struct{}:
			select {
			case ch <- struct{}{}:
				ok = true
			case <-time.After(10 * time.Second):
			}
		case error:
			select {
			case nodes.errs <- ch:
				ok = true
			case <-time.After(10 * time.Second):
			}
		}
		if !ok {
			t.Fatal("the loop did not take the change within 10 s")
		}
	}
	// settle returns once the loop has handled everything before it: it
	// takes a send only between two events.
	settle := func() {
		t.Helper()
		send(nodes.changed)
		send(nodes.changed)
	}
	// answer makes the version checks answer v (or err), and returns once
	// the loop has taken such an answer in.
	answer := func(v string, err error) {
		t.Helper()
		mu.Lock()
		version, versionErr = v, err
		select {
		case <-asked:
		default:
		}
		mu.Unlock()
		select {
		case <-asked:
		case <-time.After(10 * time.Second):
			t.Fatal("the loop did not check the version within 10 s")
		}
		settle()
	}
	setNodes := func(synced bool, list ...inject.Node) {
		t.Helper()
		nodes.mu.Lock()
		nodes.nodes, nodes.synced = list, synced
		nodes.mu.Unlock()
		settle()
	}
	known := func() bool { return c.target().Cluster.Known }

	answer("", errors.New("connection refused"))
	if got := c.target(); got.Mode != inject.ModeAuto || got.Cluster.Known {
		t.Errorf("before the first answer: %+v, want auto on an unknown cluster", got)
	}
	answer("v1.37.2", nil)
	if known() {
		t.Error("known before the Nodes were listed")
	}
	setNodes(true, inject.Node{Name: "a", KubeletVersion: "v1.37.2"}, inject.Node{Name: "b", KubeletVersion: "v1.35.0"})
	native := inject.Cluster{Known: true, NativeSidecars: true, Version: "v1.37.2"}
	if got := c.target().Cluster; got != native {
		t.Errorf("every kubelet 1.33 or later: %+v, want %+v", got, native)
	}
	wantMetrics(t, c, `job_signal_webhook_native_sidecars{version="v1.37.2"} 1`, `job_signal_webhook_nodes_holding_back_native_sidecars 0`)

	old := inject.Node{Name: "old-1", KubeletVersion: "v1.30.4"}
	setNodes(true, inject.Node{Name: "a", KubeletVersion: "v1.37.2"}, old)
	if got := c.target().Cluster; got.NativeSidecars || got.HeldBack != 1 || !strings.Contains(got.Reason, "old-1") {
		t.Errorf("a Node with a 1.30 kubelet joined: %+v, want the pair, held back by it", got)
	}
	wantMetrics(t, c, `job_signal_webhook_native_sidecars{version="v1.37.2"} 0`, `job_signal_webhook_nodes_holding_back_native_sidecars 1`)

	answer("", errors.New("timeout"))
	if got := c.target().Cluster; got.Version != "v1.37.2" || got.HeldBack != 1 {
		t.Errorf("after a failed version check: %+v, want the last answer", got)
	}
	send(errors.New("nodes is forbidden"))
	settle()
	if got := c.target().Cluster; got.HeldBack != 1 {
		t.Errorf("after a failed watch: %+v, want the last answer", got)
	}
	answer("v1.37.2", nil)
	setNodes(true, inject.Node{Name: "a", KubeletVersion: "v1.37.2"})
	if got := c.target().Cluster; got != native {
		t.Errorf("the old Node left: %+v, want %+v", got, native)
	}
	wantMetrics(t, c, `job_signal_webhook_nodes_holding_back_native_sidecars 0`)
	answer("v1.30.14", nil)
	if got := c.target().Cluster; got.NativeSidecars || got.Version != "v1.30.14" {
		t.Errorf("the API server is 1.30: %+v", got)
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
	for _, want := range []string{
		"could not check the cluster: until it answers", "cluster checked",
		`msg="a Node holds native sidecars back: its kubelet is older than 1.33, so mode auto gives the pair" node=old-1 kubeletVersion=v1.30.4 heldBack=1`,
		`msg="a Node no longer holds native sidecars back (upgraded or gone)" node=old-1 kubeletVersionWas=v1.30.4 heldBack=0`,
		"keeping its last answer", "could not watch the Nodes", "nativeSidecars=false",
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, logs.String())
		}
	}
}

// TestHeldBackChanges: a Node that begins to hold native sidecars back
// (or holds them back at another version) and one that stops, in name
// order; the same set twice is no change.
func TestHeldBackChanges(t *testing.T) {
	for _, tc := range []struct {
		name          string
		before, after map[string]string
		want          []nodeChange
	}{
		{"none", nil, map[string]string{}, nil},
		{"same", map[string]string{"a": "v1.30.1"}, map[string]string{"a": "v1.30.1"}, nil},
		{"joined", map[string]string{"a": "v1.30.1"}, map[string]string{"a": "v1.30.1", "b": "v1.31.0"},
			[]nodeChange{{Name: "b", KubeletVersion: "v1.31.0", Holds: true}}},
		{"upgraded but still old", map[string]string{"a": "v1.30.1"}, map[string]string{"a": "v1.32.0"},
			[]nodeChange{{Name: "a", KubeletVersion: "v1.32.0", Holds: true, Was: "v1.30.1"}}},
		{"left or upgraded", map[string]string{"a": "v1.30.1", "c": "v1.29.0"}, map[string]string{"b": "v1.31.0"},
			[]nodeChange{{Name: "b", KubeletVersion: "v1.31.0", Holds: true}, {Name: "a", Was: "v1.30.1"}, {Name: "c", Was: "v1.29.0"}}},
	} {
		if got := heldBackChanges(tc.before, tc.after); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if got := heldBack("v1.37.2", []inject.Node{{Name: "a", KubeletVersion: "v1.33.0"}, {Name: "b", KubeletVersion: "v1.32.9"}, {Name: "c", KubeletVersion: "garbage"}}); len(got) != 2 || got["b"] != "v1.32.9" || got["c"] != "garbage" {
		t.Errorf("heldBack: %v, want b and c (a kubelet version that cannot be read holds back too)", got)
	}
	if got := heldBack("v1.30.0", []inject.Node{{Name: "b", KubeletVersion: "v1.30.0"}}); len(got) != 0 {
		t.Errorf("heldBack under a 1.30 API server: %v, want none by name (the API server holds them back)", got)
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
