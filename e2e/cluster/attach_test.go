package cluster

import (
	"strings"
	"testing"
)

// The decisions of Attach that need no cluster: run by make test.

func TestServerMinor(t *testing.T) {
	for _, tc := range []struct {
		major, minor string
		want         int
		err          bool
	}{
		{"1", "37", 37, false},
		{"1", "29+", 29, false}, // as GKE and EKS write it
		{"1", "", 0, true},
		{"2", "0", 0, true},
		{"1", "x", 0, true},
	} {
		got, err := serverMinor(tc.major, tc.minor)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("serverMinor(%q, %q) = %d, %v; want %d, error %v", tc.major, tc.minor, got, err, tc.want, tc.err)
		}
	}
}

func TestAttachedFeatures(t *testing.T) {
	for _, tc := range []struct {
		minor  int
		native bool
		want   Features
	}{
		// Whatever the version, the API server's word on native sidecars,
		// no gates of ours and no powers past the API.
		{30, true, Features{NativeSidecars: true}},
		{37, false, Features{JobVerdictFirst: true}},
		{37, true, Features{NativeSidecars: true, JobVerdictFirst: true}},
	} {
		if got := attachedFeatures(tc.minor, tc.native); got != tc.want {
			t.Errorf("attachedFeatures(%d, %v) = %+v, want %+v", tc.minor, tc.native, got, tc.want)
		}
	}
	if got := featuresOf(37).Powers; got != (Powers{}) {
		t.Errorf("featuresOf decides the version's facts only; Start adds the powers: %+v", got)
	}
}

func TestCheckDelivery(t *testing.T) {
	for _, tc := range []struct {
		cfg Config
		err string
	}{
		{Config{Kubeconfig: "k", Registry: "reg.example/me"}, ""},
		{Config{Kubeconfig: "k", Load: "kind load image-archive"}, ""},
		{Config{Kubeconfig: "k"}, "E2E_REGISTRY=host[:port]/path"},
		{Config{Kubeconfig: "k", Registry: "r", Load: "l"}, "not both"},
		{Config{Registry: "r"}, "E2E_KUBECONFIG"},
	} {
		err := checkDelivery(tc.cfg)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("checkDelivery(%+v) = %v; want an error containing %q", tc.cfg, err, tc.err)
		}
	}
}

func TestPushName(t *testing.T) {
	for _, tc := range []struct{ prefix, ref, want, err string }{
		{"reg.example:5000/me", "localhost/job-signal:e2e", "reg.example:5000/me/job-signal:e2e", ""},
		{"127.0.0.1:5000/", "localhost/busybox:e2e", "127.0.0.1:5000/busybox:e2e", ""},
		{"ghcr.io/someone/e2e", "localhost/istio-proxyv2:e2e", "ghcr.io/someone/e2e/istio-proxyv2:e2e", ""},
		{"reg", "Not A Ref", "", "image"},
	} {
		got, err := pushName(tc.prefix, tc.ref)
		if got != tc.want || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("pushName(%q, %q) = %q, %v; want %q", tc.prefix, tc.ref, got, err, tc.want)
		}
	}
}

func TestNearestBuilt(t *testing.T) {
	pinned := []Version{{Kube: "v1.30.14", minor: 30}, {Kube: "v1.37.2", minor: 37}} // oldest first
	all := func(Version) bool { return true }
	only30 := func(v Version) bool { return v.minor == 30 }
	for _, tc := range []struct {
		minor int
		built func(Version) bool
		want  string
	}{
		{37, all, "v1.37.2"},
		{31, all, "v1.30.14"},
		{34, all, "v1.37.2"}, // nearer
		{40, all, "v1.37.2"},
		{37, only30, "v1.30.14"}, // the only one built
		{37, func(Version) bool { return false }, ""},
	} {
		v, ok := nearestBuilt(pinned, tc.minor, tc.built)
		if v.Kube != tc.want || ok != (tc.want != "") {
			t.Errorf("nearestBuilt(minor %d) = %v, %v; want %q", tc.minor, v, ok, tc.want)
		}
	}
}
