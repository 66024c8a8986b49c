package inject

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestApplyToMovesBetweenLists: the native form moves containers between
// spec.containers and spec.initContainers; applyTo applies such moves
// (RFC 6902: the value removed, then added at path) as the API server
// does.
func TestApplyToMovesBetweenLists(t *testing.T) {
	doc := []byte(`{"spec":{"l":[1,2.50,{"name":"x"}],"m":[{"name":"a"}]}}`)
	for i, ops := range [][]Op{
		{{Op: "move", From: "/spec/l/0", Path: "/spec/m/-"}},
		{{Op: "move", From: "/spec/l/1", Path: "/spec/m/0"}},
		{{Op: "move", From: "/spec/l/2", Path: "/spec/m/1"}},
		{{Op: "move", From: "/spec/l/0", Path: "/spec/m/-"}, {Op: "move", From: "/spec/l/1", Path: "/spec/m/-"}, {Op: "add", Path: "/spec/m/2/k", Value: "v"}},
		{{Op: "move", From: "/spec/m/0", Path: "/spec/l/3"}, {Op: "move", From: "/spec/l/0", Path: "/spec/l/3"}},
		{{Op: "move", From: "/spec/l/0", Path: "/spec/l/-"}},
		{{Op: "move", From: "/spec/l/2", Path: "/spec/l/0"}},
		{{Op: "move", From: "/spec/l/0", Path: "/spec/l/2"}},
		{{Op: "move", From: "/spec/m/0", Path: "/spec/l/0"}, {Op: "remove", Path: "/spec/m"}},
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if !checkAsApply(t, doc, ops) {
				t.Fatalf("%v does not apply", ops)
			}
		})
	}
}

// TestApplyToNative: applyTo applies the native form's ops, their undo,
// and the undo followed by the same injection again (the webhook's second
// call), as the API server does.
func TestApplyToNative(t *testing.T) {
	target := Target{Mode: ModeNative, Cluster: Cluster{Known: true, NativeSidecars: true}}
	n := 0
	for _, sh := range injectableShapes(t) {
		plan, err := PrepareFor(sh.data, target)
		if err != nil || plan.Nothing() != "" {
			continue
		}
		res, err := plan.Inject(sh.images, "ghcr.io/job-signal/job-signal:v1")
		if errors.Is(err, ErrNotNative) {
			continue // decided by an image
		}
		if err != nil || res.Form != FormNative {
			t.Fatalf("%s: %v %s", sh.name, err, res.Form)
		}
		if !checkAsApply(t, sh.data, res.Ops) {
			t.Fatalf("%s: the native ops do not apply", sh.name)
		}
		injected, _ := Apply(sh.data, res.Ops)
		again, err := PrepareFor(injected, target)
		if err != nil {
			t.Fatalf("%s: %v", sh.name, err)
		}
		if !checkAsApply(t, injected, again.prev.ops) {
			t.Fatalf("%s: the undo does not apply", sh.name)
		}
		ch := again.choice
		ch.signals = again.signalsRead(nil)
		redo := nativeOps(again.orig, ch, again.prev.text)
		if !checkAsApply(t, injected, append(again.prev.ops, redo...)) || !sameJSON(decodeDoc(t, injected), must(applyTo(decodeDoc(t, injected), append(again.prev.ops, redo...)))) {
			t.Fatalf("%s: injecting again is not seen as no change", sh.name)
		}
		n++
	}
	if n < 10 {
		t.Fatalf("only %d shapes checked", n)
	}
}

// TestChooseForm is the table of the choice between the pair and native
// sidecars (docs/native.md): one row per rule, with its reason.
func TestChooseForm(t *testing.T) {
	modern := Cluster{Known: true, NativeSidecars: true, Version: "v1.37.2"}
	auto := Target{Mode: ModeAuto, Cluster: modern}
	native := Target{Mode: ModeNative, Cluster: modern}
	plain := sidecarNeeds{name: "proxy"}
	with := func(change func(*sidecarNeeds)) podNeeds {
		s := plain
		change(&s)
		return podNeeds{sidecars: []sidecarNeeds{s}, grace: 30 * time.Second}
	}
	one := with(func(*sidecarNeeds) {})
	readiness := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8080)}}, PeriodSeconds: 10, TimeoutSeconds: 2}
	for _, tc := range []struct {
		name   string
		target Target
		pod    podNeeds
		form   Form // "" with reason "": pending on an image; "" with a reason: refused
		reason string
	}{
		// The mode and the cluster.
		{"mode pair", Target{Mode: ModePair, Cluster: modern}, one, FormPair, "pair: mode pair"},
		{"auto, cluster not known", Target{Mode: ModeAuto}, one, FormPair, "pair: the cluster is not known, and the pair works on every cluster"},
		{"auto, cluster without native sidecars", Target{Mode: ModeAuto, Cluster: Cluster{Known: true, Version: "v1.28.4"}}, one, FormPair, "pair: the cluster (v1.28.4) has no native sidecars"},
		{"native, cluster without native sidecars: refused", Target{Mode: ModeNative, Cluster: Cluster{Known: true, Version: "v1.28.4"}}, one, "", "native: the cluster (v1.28.4) has no native sidecars"},
		{"native, cluster not known: as asked", Target{Mode: ModeNative}, one, FormNative, reasonNative},
		{"auto: every sidecar maps", auto, one, FormNative, reasonNative},
		{"native: a sidecar that does not map is refused", native, with(func(s *sidecarNeeds) { s.readyKey, s.readyValue = "ready-file", "/ready" }), "",
			`native: sidecar "proxy" is ready on a file (ready-file), which no kubelet probe reads`},

		// Readiness.
		{"no readiness: started is ready", auto, one, FormNative, reasonNative},
		{"a startupProbe of its own", auto, with(func(s *sidecarNeeds) { s.startupProbe = readiness }), FormNative, reasonNative},
		{"a readinessProbe, copied", auto, with(func(s *sidecarNeeds) { s.readinessProbe = readiness }), FormNative, reasonNative},
		{"a readinessProbe with successThreshold 2", auto, with(func(s *sidecarNeeds) {
			s.readinessProbe = &corev1.Probe{ProbeHandler: readiness.ProbeHandler, SuccessThreshold: 2}
		}), FormPair,
			`pair: sidecar "proxy"'s readinessProbe has successThreshold 2, and a startupProbe must have 1`},
		{"ready-exec", auto, with(func(s *sidecarNeeds) { s.readyKey, s.readyValue = "ready-exec", `["pg_isready","-h","127.0.0.1"]` }), FormNative, reasonNative},
		{"ready-http on the Pod's IP", auto, with(func(s *sidecarNeeds) { s.readyKey, s.readyValue = "ready-http", "http://10.1.2.3:8080/ready" }), FormNative, reasonNative},
		{"ready-tcp on loopback", auto, with(func(s *sidecarNeeds) { s.readyKey, s.readyValue = "ready-tcp", "127.0.0.1:5432" }), FormPair,
			`pair: sidecar "proxy" is ready on 127.0.0.1:5432, the Pod's loopback, which the kubelet cannot reach`},
		{"ready-http on localhost", auto, with(func(s *sidecarNeeds) { s.readyKey, s.readyValue = "ready-http", "http://localhost:9090/startup" }), FormPair,
			`pair: sidecar "proxy" is ready on http://localhost:9090/startup, the Pod's loopback, which the kubelet cannot reach`},
		{"a long URL is shortened", auto, with(func(s *sidecarNeeds) {
			s.readyKey, s.readyValue = "ready-http", "http://127.0.0.1:8080/"+strings.Repeat("a", 200)
		}), FormPair,
			`pair: sidecar "proxy" is ready on http://127.0.0.1:8080/` + strings.Repeat("a", 55) + `..., the Pod's loopback, which the kubelet cannot reach`},
		{"ready-tcp on a name", auto, with(func(s *sidecarNeeds) { s.readyKey, s.readyValue = "ready-tcp", "db.example:5432" }), FormPair,
			`pair: sidecar "proxy" is ready on db.example:5432, a name the kubelet would resolve on the node, not in the Pod`},
		{"ready-http on ::1", auto, with(func(s *sidecarNeeds) { s.readyKey, s.readyValue = "ready-http", "http://[::1]:9090/startup" }), FormPair,
			`pair: sidecar "proxy" is ready on http://[::1]:9090/startup, the Pod's loopback, which the kubelet cannot reach`},
		{"ready-file", auto, with(func(s *sidecarNeeds) { s.readyKey, s.readyValue = "ready-file", "/tmp/ready" }), FormPair,
			`pair: sidecar "proxy" is ready on a file (ready-file), which no kubelet probe reads`},
		{"the known sidecar's readiness on loopback", auto, with(func(s *sidecarNeeds) { s.tableReady = "http://127.0.0.1:9090/startup" }), FormPair,
			`pair: sidecar "proxy" (a known sidecar) is ready on http://127.0.0.1:9090/startup, the Pod's loopback, which the kubelet cannot reach`},
		{"an annotation and a startupProbe", auto, with(func(s *sidecarNeeds) { s.readyKey, s.readyValue, s.startupProbe = "ready-exec", "true", readiness }), FormPair,
			`pair: sidecar "proxy" has both job-signal.dev/ready-exec and a startupProbe, and the kubelet would go by the probe alone`},

		// Quit URL.
		{"a quit URL on loopback", auto, with(func(s *sidecarNeeds) { s.quitURL = "http://127.0.0.1:15020/quitquitquit" }), FormPair,
			`pair: sidecar "proxy" has a quit URL on http://127.0.0.1:15020/quitquitquit, the Pod's loopback, which the kubelet cannot reach`},
		{"a quit URL on the Pod's IP: preStop", auto, with(func(s *sidecarNeeds) { s.quitURL = "http://10.1.2.3:15020/quitquitquit" }), FormNative, reasonNative},
		{"a quit URL and a preStop hook", auto, with(func(s *sidecarNeeds) { s.quitURL, s.preStop = "http://10.1.2.3:15020/quitquitquit", true }), FormPair,
			`pair: sidecar "proxy" has a quit URL and a preStop hook of its own`},
		{"a quit URL and stop-after", auto, podNeeds{grace: 30 * time.Second, sidecars: []sidecarNeeds{{name: "proxy", quitURL: "http://10.1.2.3:1/q", stopAfter: []string{"b"}}, {name: "b"}}}, FormPair,
			`pair: sidecar "proxy" has a quit URL and stop-after, and the kubelet runs preStop hooks at once`},

		// Stop signal.
		{"stop signal, image not looked up yet", auto, with(func(s *sidecarNeeds) { s.stopSignal, s.stopFrom = "QUIT", "the known sidecar nginx" }), "", ""},
		{"stop signal, the image's", auto, with(func(s *sidecarNeeds) {
			s.stopSignal, s.stopFrom, s.imageSignal = "QUIT", "the known sidecar nginx", "QUIT"
		}), FormNative, reasonNative},
		{"stop signal, image not found", auto, podNeeds{grace: 30 * time.Second, looked: true, sidecars: []sidecarNeeds{{name: "proxy", stopSignal: "QUIT", stopFrom: "the known sidecar nginx"}}}, FormPair,
			`pair: sidecar "proxy" stops on QUIT (the known sidecar nginx), and its image's STOPSIGNAL is not known`},
		{"stop signal other than the image's", auto, with(func(s *sidecarNeeds) {
			s.stopSignal, s.stopFrom, s.imageSignal = "INT", "annotation stop-signal", "TERM"
		}), FormPair,
			`pair: sidecar "proxy" stops on INT (annotation stop-signal), its image on TERM, and lifecycle.stopSignal is behind a feature gate`},

		// Grace, restart, restartPolicy.
		{"grace within the Pod's", auto, with(func(s *sidecarNeeds) { s.grace = 30 * time.Second }), FormNative, reasonNative},
		{"grace above the Pod's", auto, with(func(s *sidecarNeeds) { s.grace = 45 * time.Second }), FormPair,
			`pair: sidecar "proxy"'s grace 45s is more than the Pod's terminationGracePeriodSeconds (30s)`},
		{"restart Always", auto, with(func(s *sidecarNeeds) { s.restart = "Always" }), FormNative, reasonNative},
		{"restart Never", auto, with(func(s *sidecarNeeds) { s.restart = "Never" }), FormPair,
			`pair: sidecar "proxy" has restart Never, and a native sidecar is always restarted`},
		{"a restartPolicy of its own", auto, with(func(s *sidecarNeeds) { s.ownRestart = true }), FormPair, `pair: sidecar "proxy" sets its own restartPolicy`},

		// The main container, the order.
		{"main's ready-timeout", auto, podNeeds{sidecars: []sidecarNeeds{plain}, grace: 30 * time.Second, readyTimeout: true}, FormPair,
			"pair: the main container's ready-timeout: a native sidecar that is never ready is restarted, it cannot fail the Pod"},
		{"after: a start order", auto, podNeeds{grace: 30 * time.Second, sidecars: []sidecarNeeds{{name: "a"}, {name: "b"}}, after: map[string][]string{"a": {"b"}}}, FormNative, reasonNative},
		{"stop-after, the reverse of the start order", auto, podNeeds{grace: 30 * time.Second, sidecars: []sidecarNeeds{{name: "a"}, {name: "b", stopAfter: []string{"a"}}}}, FormNative, reasonNative},
		{"after and stop-after at odds", auto, podNeeds{grace: 30 * time.Second, sidecars: []sidecarNeeds{{name: "a"}, {name: "b", stopAfter: []string{"a"}}}, after: map[string][]string{"b": {"a"}}}, FormPair,
			"pair: no start order has each sidecar after its after and before its stop-after sidecars (a, b, a), and native sidecars stop in reverse start order"},
		{"one sidecar that does not map: the pair whole", auto, podNeeds{grace: 30 * time.Second, sidecars: []sidecarNeeds{{name: "a"}, {name: "b", readyKey: "ready-file", readyValue: "/r"}}}, FormPair,
			`pair: sidecar "b" is ready on a file (ready-file), which no kubelet probe reads`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// These rows are about other rules than slowStop's: every
			// sidecar here stops promptly (TestChooseFormSlowStop).
			tc.pod.sidecars = slices.Clone(tc.pod.sidecars)
			for i := range tc.pod.sidecars {
				tc.pod.sidecars[i].prompt = true
			}
			ch := chooseForm(tc.target, tc.pod)
			checkChoice(t, ch)
			if ch.form != tc.form || ch.reason != tc.reason {
				t.Errorf("got %q %q, want %q %q", ch.form, ch.reason, tc.form, tc.reason)
			}
			if (ch.err != nil) != (tc.form == "" && tc.reason != "") {
				t.Errorf("error %v", ch.err)
			}
		})
	}
}

// checkChoice checks what every choice must be: a reason of one short
// line with its class (unless pending on an image), and a refusal that
// wraps ErrNotNative, says why and names a change to the Pod.
func checkChoice(t *testing.T, ch choice) {
	t.Helper()
	if len(ch.reason) > 200 || strings.Contains(ch.reason, "\n") {
		t.Errorf("reason %q: keep it to one short line", ch.reason)
	}
	if (ch.reason == "") != (ch.class == "") || ch.class != "" && !slices.Contains(ReasonClasses, ch.class) {
		t.Errorf("class %q for reason %q: want one of ReasonClasses with every reason", ch.class, ch.reason)
	}
	if ch.err == nil {
		return
	}
	var nn *NotNativeError
	if !errors.Is(ch.err, ErrNotNative) || !errors.As(ch.err, &nn) {
		t.Fatalf("error %v does not wrap ErrNotNative as a NotNativeError", ch.err)
	}
	if nn.Class != ch.class || "native: "+nn.Why != ch.reason || nn.Fix == "" || !strings.Contains(ch.err.Error(), "for native sidecars, "+nn.Fix) {
		t.Errorf("refusal %+v for reason %q: want its class, its reason and a change to the Pod", nn, ch.reason)
	}
}

// TestStartOrder: the init containers' order satisfies after and
// stop-after, ties in container order.
func TestStartOrder(t *testing.T) {
	pod := podNeeds{sidecars: []sidecarNeeds{{name: "a"}, {name: "b"}, {name: "c", stopAfter: []string{"d"}}, {name: "d"}, {name: "e", stopAfter: []string{"a"}}},
		after: map[string][]string{"a": {"b"}, "b": {"d"}}}
	got, o := startOrder(pod, nil)
	want := []string{"c", "d", "b", "e", "a"}
	if !o.none() || !slices.Equal(got, want) {
		t.Fatalf("got %v %+v, want %v", got, o, want)
	}
}
