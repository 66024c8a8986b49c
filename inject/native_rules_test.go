package inject

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The rules of chooseForm that keep the verdict and its time, and the
// Pod's start, what they are with the pair (docs/native.md): the cluster's
// reason, every probe written or copied on an address the kubelet reaches,
// the Job's podFailurePolicy, a mesh's proxy first, and sidecars that stop
// promptly.

// ruleCase is one row: the choice's form, class and reason (a part of
// it), and for mode native the change its refusal names (a part).
type ruleCase struct {
	name   string
	target Target
	pod    podNeeds
	form   Form // "" with an error: refused
	class  ReasonClass
	reason string
	fix    string
	order  []string // native: the start order, when it matters
}

func runRules(t *testing.T, cases []ruleCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ch := chooseForm(tc.target, tc.pod)
			checkChoice(t, ch)
			if ch.form != tc.form || ch.class != tc.class || !strings.Contains(ch.reason, tc.reason) {
				t.Fatalf("got %q %q %q, want %q %q with %q", ch.form, ch.class, ch.reason, tc.form, tc.class, tc.reason)
			}
			var nn *NotNativeError
			if tc.form == "" && (!errors.As(ch.err, &nn) || !strings.Contains(nn.Fix, tc.fix)) {
				t.Errorf("refusal %v: want it to name %q", ch.err, tc.fix)
			}
			if tc.order != nil && !slices.Equal(ch.order, tc.order) {
				t.Errorf("start order %v, want %v", ch.order, tc.order)
			}
		})
	}
}

var (
	modern1_37 = Cluster{Known: true, NativeSidecars: true, Version: "v1.37.2"}
	auto137    = Target{Mode: ModeAuto, Cluster: modern1_37}
	native137  = Target{Mode: ModeNative, Cluster: modern1_37}
)

// prompt is a sidecar known to stop promptly: slowStop has nothing to say.
func prompt(name string) sidecarNeeds { return sidecarNeeds{name: name, prompt: true} }

func onePod(s sidecarNeeds) podNeeds {
	return podNeeds{sidecars: []sidecarNeeds{s}, grace: 30 * time.Second}
}

func httpProbe(host string, port intstr.IntOrString) *corev1.Probe {
	return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Host: host, Path: "/ready", Port: port}}}
}

// TestChooseFormCluster: a known cluster without native sidecars gives
// the pair with ClusterFrom's reason, or the version when there is none.
func TestChooseFormCluster(t *testing.T) {
	one := onePod(prompt("proxy"))
	skew := ClusterFrom("v1.37.2", []Node{{"a", "v1.37.2"}, {"m", "v1.32.0"}})
	old := ClusterFrom("v1.30", nil)
	runRules(t, []ruleCase{
		{"a node's kubelet", Target{Mode: ModeAuto, Cluster: skew}, one, FormPair, ClassCluster, "pair: node m's kubelet is v1.32.0, before 1.33", "", nil},
		{"an API server before 1.33", Target{Mode: ModeAuto, Cluster: old}, one, FormPair, ClassCluster, "pair: the API server is v1.30, before 1.33", "", nil},
		{"native: refused", Target{Mode: ModeNative, Cluster: skew}, one, "", ClassCluster, "native: node m's kubelet", "every kubelet at 1.33 or later", nil},
		{"no reason: the version", Target{Mode: ModeAuto, Cluster: Cluster{Known: true, Version: "v1.31.1"}}, one, FormPair, ClassCluster, "pair: the cluster (v1.31.1) has no native sidecars", "", nil},
		{"not known", Target{Mode: ModeAuto}, one, FormPair, ClassClusterUnknown, "pair: the cluster is not known", "", nil},
		{"mode pair", Target{Mode: ModePair, Cluster: modern1_37}, one, FormPair, ClassMode, "pair: mode pair", "", nil},
		{"1.33 and every kubelet", Target{Mode: ModeAuto, Cluster: ClusterFrom("v1.33.0", []Node{{"a", "v1.33.1"}})}, one, FormNative, ClassNative, reasonNative, "", nil},
	})
}

// TestChooseFormLoopbackProbes: a readinessProbe copied to a startupProbe
// must be one the kubelet can pass from the node.
func TestChooseFormLoopbackProbes(t *testing.T) {
	with := func(p *corev1.Probe) podNeeds {
		s := prompt("proxy")
		s.readinessProbe, s.ports = p, []corev1.ContainerPort{{Name: "admin", ContainerPort: 9901}}
		return onePod(s)
	}
	tcp := func(host string) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Host: host, Port: intstr.FromInt32(5432)}}}
	}
	grpc := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 4317}}}
	fix := `drop the host of sidecar "proxy"'s readinessProbe`
	runRules(t, []ruleCase{
		{"httpGet on 127.0.0.1", auto137, with(httpProbe("127.0.0.1", intstr.FromInt32(9090))), FormPair, ClassLoopbackProbe,
			`pair: sidecar "proxy"'s readinessProbe is on 127.0.0.1:9090, the Pod's loopback, which the kubelet cannot reach`, "", nil},
		{"httpGet on localhost, a named port", auto137, with(httpProbe("localhost", intstr.FromString("admin"))), FormPair, ClassLoopbackProbe,
			`readinessProbe is on localhost:9901, the Pod's loopback`, "", nil},
		{"tcpSocket on ::1", auto137, with(tcp("::1")), FormPair, ClassLoopbackProbe, `readinessProbe is on [::1]:5432, the Pod's loopback`, "", nil},
		{"tcpSocket on 0.0.0.0", auto137, with(tcp("0.0.0.0")), FormPair, ClassLoopbackProbe, `readinessProbe is on 0.0.0.0:5432, the Pod's loopback`, "", nil},
		{"a name", auto137, with(tcp("db.example")), FormPair, ClassProbeHost, `readinessProbe is on db.example:5432, a name the kubelet would resolve on the node`, "", nil},
		{"native: refused, naming the change", native137, with(httpProbe("127.0.0.1", intstr.FromInt32(9090))), "", ClassLoopbackProbe, `native: sidecar "proxy"'s readinessProbe is on 127.0.0.1:9090`, fix, nil},
		{"no host: the Pod's IP", auto137, with(httpProbe("", intstr.FromInt32(9090))), FormNative, ClassNative, reasonNative, "", nil},
		{"an IP of the Pod's network", auto137, with(tcp("10.1.2.3")), FormNative, ClassNative, reasonNative, "", nil},
		{"gRPC: no host", auto137, with(grpc), FormNative, ClassNative, reasonNative, "", nil},
	})
}

// TestChooseFormPodFailurePolicy: a podFailurePolicy rule that reads a
// sidecar's exit code keeps the pair; rules on main alone do not.
func TestChooseFormPodFailurePolicy(t *testing.T) {
	pod := func(j judged) podNeeds {
		return podNeeds{sidecars: []sidecarNeeds{prompt("proxy"), prompt("logs")}, grace: 30 * time.Second, exitCodes: j}
	}
	runRules(t, []ruleCase{
		{"a rule without containerName", auto137, pod(judged{all: true}), FormPair, ClassPodFailurePolicy,
			`pair: the Job's podFailurePolicy judges sidecar "proxy"'s exit code (a rule without containerName)`, "", nil},
		{"a rule naming a sidecar", auto137, pod(judged{names: []string{"main", "logs"}}), FormPair, ClassPodFailurePolicy,
			`pair: the Job's podFailurePolicy judges sidecar "logs"'s exit code, which native sidecars change`, "", nil},
		{"native: refused", native137, pod(judged{names: []string{"logs"}}), "", ClassPodFailurePolicy, "native: the Job's podFailurePolicy", `take sidecar "logs" out of the onExitCodes rules`, nil},
		{"native, any container: refused", native137, pod(judged{all: true}), "", ClassPodFailurePolicy, "", "the main container's containerName", nil},
		{"rules on main and an init container only", auto137, pod(judged{names: []string{"main", "migrate"}}), FormNative, ClassNative, reasonNative, "", nil},
		{"none", auto137, pod(judged{}), FormNative, ClassNative, reasonNative, "", nil},
	})
}

// TestExitCodeRules: the fact as it arrives, from the caller or the
// annotation, read in one place; either naming a container is enough.
func TestExitCodeRules(t *testing.T) {
	for _, tc := range []struct {
		target, annotation string
		want               judged
		err                string
	}{
		{"", "", judged{}, ""},
		{"*", "", judged{all: true}, ""},
		{"", "*", judged{all: true}, ""},
		{"logs,main", "proxy", judged{names: []string{"logs", "main", "proxy"}}, ""},
		{"main", "main", judged{names: []string{"main"}}, ""},
		{"Main!", "", judged{}, `Target.ExitCodeRules "Main!"`},
	} {
		a, err := parseExitCodeRules(tc.annotation)
		if err != nil {
			t.Fatal(err)
		}
		got, err := exitCodeRules(tc.target, a)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q %q: error %v, want %q", tc.target, tc.annotation, err, tc.err)
			}
			continue
		}
		if err != nil || got.all != tc.want.all || !slices.Equal(got.names, tc.want.names) {
			t.Errorf("%q %q: %+v %v, want %+v", tc.target, tc.annotation, got, err, tc.want)
		}
	}
	if _, err := parseSettings(map[string]string{AnnotationExitCodeRules: "a, b"}); err != nil {
		t.Errorf("the annotation is refused: %v", err)
	}
	if _, err := parseSettings(map[string]string{AnnotationExitCodeRules: "*,x"}); err == nil || !strings.Contains(err.Error(), AnnotationExitCodeRules) {
		t.Errorf("a bad value: %v, want an error naming the annotation", err)
	}
}

// TestChooseFormMesh: a network proxy starts first; a startupProbe on a
// port another container serves starts after it; where that cannot be,
// the pair (or native's refusal), never a Pod whose sidecar waits for
// ever.
func TestChooseFormMesh(t *testing.T) {
	proxy := prompt("istio-proxy")
	proxy.proxy, proxy.serves = true, []int32{15090, 15020, 15021}
	proxy.readinessProbe = httpProbe("", intstr.FromInt32(15021))
	logs := prompt("logs") // Istio's rewrite of its readinessProbe
	logs.readinessProbe, logs.ports, logs.serves = httpProbe("", intstr.FromInt32(15020)), []corev1.ContainerPort{{ContainerPort: 2020}}, []int32{2020}
	plain := prompt("config")
	pod := func(after map[string][]string, sidecars ...sidecarNeeds) podNeeds {
		return podNeeds{sidecars: sidecars, after: after, grace: 30 * time.Second}
	}
	stopLast := logs
	stopLast.stopAfter = []string{"istio-proxy"}
	own := plain
	own.startupProbe, own.serves = httpProbe("", intstr.FromInt32(8080)), []int32{8080}
	onOther := plain
	onOther.readinessProbe = httpProbe("", intstr.FromInt32(8080))
	server := prompt("server")
	server.serves = []int32{8080}
	execProbe := plain
	execProbe.readinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}
	onAddress := plain
	onAddress.readyKey, onAddress.readyValue = "ready-http", "http://10.1.2.3:8080/ready"
	regularProxy := func(s sidecarNeeds) podNeeds {
		p := pod(nil, s)
		p.regulars = []regular{{name: "main", main: true}, {name: "istio-proxy", proxy: true, serves: []int32{15020}}}
		return p
	}
	mainServes := pod(nil, onOther)
	mainServes.regulars = []regular{{name: "main", main: true, serves: []int32{8080}}}
	runRules(t, []ruleCase{
		{"Istio's order [logs, istio-proxy]: the proxy first", auto137, pod(nil, logs, proxy), FormNative, ClassNative, reasonNative, "", []string{"istio-proxy", "logs"}},
		{"the proxy first, without probes", auto137, pod(nil, plain, proxy), FormNative, ClassNative, reasonNative, "", []string{"istio-proxy", "config"}},
		{"logs asked to stop after the proxy: its probe could never pass", auto137, pod(nil, stopLast, proxy), FormPair, ClassProbeOrder,
			`pair: sidecar "logs"'s startupProbe is on port 15020, which "istio-proxy" serves`, "", nil},
		{"native: refused", native137, pod(nil, stopLast, proxy), "", ClassProbeOrder, "", `probe sidecar "logs" on a port it serves itself`, nil},
		{"the proxy asked to start after config", auto137, pod(map[string][]string{"istio-proxy": {"config"}}, plain, proxy), FormPair, ClassMeshOrder,
			`pair: network proxy "istio-proxy" must start before sidecar "config"`, "", nil},
		{"native: refused, naming the annotation", native137, pod(map[string][]string{"istio-proxy": {"config"}}, plain, proxy), "", ClassMeshOrder, "",
			`drop the after or stop-after annotation that starts "istio-proxy" after "config"`, nil},
		{"a probe on another sidecar's port: after it", auto137, pod(nil, onOther, server), FormNative, ClassNative, reasonNative, "", []string{"server", "config"}},
		{"a startupProbe on its own port", auto137, pod(nil, own, server), FormNative, ClassNative, reasonNative, "", []string{"config", "server"}},
		{"a probe on main's port", auto137, mainServes, FormPair, ClassProbeOrder, `which the main container "main" serves, started after every native sidecar`, "", nil},
		{"an ignored proxy: every probe passes through it", auto137, regularProxy(logs), FormPair, ClassMeshOrder,
			`pair: network proxy "istio-proxy" stays a regular container`, "", nil},
		{"an ignored proxy, refused", native137, regularProxy(logs), "", ClassMeshOrder, "", `make "istio-proxy" a sidecar`, nil},
		{"an ignored proxy, an exec probe", auto137, regularProxy(execProbe), FormNative, ClassNative, reasonNative, "", nil},
		{"an ignored proxy, a probe on an address of its own", auto137, regularProxy(onAddress), FormNative, ClassNative, reasonNative, "", nil},
	})
}

// TestChooseFormSlowStop: a sidecar not known to stop on its signal, in a
// Pod whose grace is longer than the pair's for it, keeps the pair in
// auto (native could end the Job later); mode native warns.
func TestChooseFormSlowStop(t *testing.T) {
	pod := func(grace time.Duration, s sidecarNeeds) podNeeds {
		return podNeeds{sidecars: []sidecarNeeds{s}, grace: grace}
	}
	unknown := sidecarNeeds{name: "tail"}
	longer := unknown
	longer.grace = 30 * time.Second
	reason := `pair: sidecar "tail" is not known to stop on its stop signal: native, it could hold the Pod for terminationGracePeriodSeconds (30s), the pair for its grace (10s)`
	runRules(t, []ruleCase{
		{"the default grace (30s)", auto137, pod(30*time.Second, unknown), FormPair, ClassSlowStop, reason, "", nil},
		{"a Pod's grace no longer than the pair's", auto137, pod(10*time.Second, unknown), FormNative, ClassNative, reasonNative, "", nil},
		{"its grace as long as the Pod's", auto137, pod(30*time.Second, longer), FormNative, ClassNative, reasonNative, "", nil},
		{"known to stop promptly", auto137, pod(60*time.Second, prompt("tail")), FormNative, ClassNative, reasonNative, "", nil},
	})
	ch := chooseForm(native137, pod(30*time.Second, unknown))
	if ch.form != FormNative || len(ch.warnings) != 1 || !strings.Contains(ch.warnings[0], "as a native sidecar it could hold the Pod") {
		t.Errorf("mode native: %q %q, want native with a warning", ch.form, ch.warnings)
	}
	// Decided before the images: a pending stop signal needs no lookup
	// when the pair is chosen anyway.
	signalled := unknown
	signalled.stopSignal, signalled.stopFrom = "QUIT", "annotation stop-signal"
	if ch := chooseForm(auto137, pod(30*time.Second, signalled)); ch.form != FormPair || len(ch.pending) != 0 {
		t.Errorf("pending and slow: %q %v, want the pair now", ch.form, ch.pending)
	}
}
