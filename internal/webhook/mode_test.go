package webhook_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/testing/webhooktest"
	"github.com/job-signal/job-signal/internal/webhook"
)

// TestModeNative: with --mode native, a Pod whose sidecar needs what
// native sidecars lack (a ready file: the kubelet cannot check it) is a
// lasting refusal: admitted without job-signal, the reason recorded in
// the Pod and counted as not_native, never given the pair.
func TestModeNative(t *testing.T) {
	s := webhooktest.Start(t, &webhook.Config{Mode: inject.ModeNative, RegistryTimeout: time.Second})
	pod := jobPod(container("export", "/export"), container("proxy", "/proxy"))
	pod.Annotations[inject.Prefix+"ready-file.proxy"] = "/tmp/ready"
	after, resp := s.Review(t, pod)
	why := after.Annotations[inject.AnnotationSkipped]
	if inject.Injected(after.Annotations) || len(after.Spec.InitContainers) != 0 || !strings.Contains(why, "native") {
		t.Errorf("injected %v, init containers %d, skipped %q: want admitted without job-signal, the reason recorded",
			inject.Injected(after.Annotations), len(after.Spec.InitContainers), why)
	}
	if len(resp.Warnings) != 1 || !strings.Contains(resp.Warnings[0], why) {
		t.Errorf("warnings %q", resp.Warnings)
	}
	metrics, err := s.Client.Get(s.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer metrics.Body.Close()
	text, _ := io.ReadAll(metrics.Body)
	for _, want := range []string{`job_signal_webhook_admissions_total{outcome="skipped",reason="not_native"} 1`, `job_signal_webhook_injected_pods_total{form="pair",reason="unclassified"} 0`} {
		if !strings.Contains(string(text), want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestModeAuto: in mode auto the webhook gives native sidecars only once
// its check found them, and the pair before (cluster unknown) and on a
// cluster without them; each Pod's form is counted.
func TestModeAuto(t *testing.T) {
	for _, tc := range []struct {
		name   string
		server string // "": not checked yet
		nodes  []inject.Node
		want   inject.Form
	}{
		{"not checked yet", "", nil, inject.FormPair},
		{"no native sidecars", "v1.30.14", []inject.Node{{Name: "n", KubeletVersion: "v1.30.14"}}, inject.FormPair},
		{"a Node's kubelet behind", "v1.37.2", []inject.Node{{Name: "n", KubeletVersion: "v1.37.2"}, {Name: "old", KubeletVersion: "v1.32.3"}}, inject.FormPair},
		{"native sidecars", "v1.37.2", []inject.Node{{Name: "n", KubeletVersion: "v1.37.2"}}, inject.FormNative},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &webhook.Config{Mode: inject.ModeAuto, RegistryTimeout: time.Second}
			s := webhooktest.Start(t, cfg)
			if tc.server != "" {
				checked(t, cfg, tc.server, tc.nodes...)
			}
			pod := jobPod(container("export", "/export"), container("proxy", "/proxy"))
			// No longer than the pair's grace: auto's native sidecars are
			// not slower for a sidecar not known to stop promptly.
			grace := int64(10)
			pod.Spec.TerminationGracePeriodSeconds = &grace
			after, _ := s.Review(t, pod)
			native := len(after.Spec.InitContainers) == 1 && after.Spec.InitContainers[0].Name == "proxy" &&
				after.Spec.InitContainers[0].RestartPolicy != nil && *after.Spec.InitContainers[0].RestartPolicy == corev1.ContainerRestartPolicyAlways
			if got := map[bool]inject.Form{true: inject.FormNative, false: inject.FormPair}[native]; got != tc.want || !inject.Injected(after.Annotations) {
				t.Errorf("form %s (init containers %+v), want %s", got, after.Spec.InitContainers, tc.want)
			}
			metrics, err := s.Client.Get(s.URL + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			defer metrics.Body.Close()
			text, _ := io.ReadAll(metrics.Body)
			if want := `job_signal_webhook_injected_pods_total{form="` + string(tc.want) + `",reason="unclassified"} 1`; !strings.Contains(string(text), want+"\n") {
				t.Errorf("/metrics lacks %s", want)
			}
		})
	}
}

// nodeList is a webhook.NodeSource of Nodes listed once, whose Changed
// channel is unbuffered: a send returns once the loop has taken it.
type nodeList struct {
	nodes   []inject.Node
	changed chan struct{}
}

func (n *nodeList) Run(context.Context)         {}
func (n *nodeList) List() ([]inject.Node, bool) { return n.nodes, true }
func (n *nodeList) Changed() <-chan struct{}    { return n.changed }
func (n *nodeList) Errors() <-chan error        { return nil }

// checked has cfg's cluster loop read an API server of version server and
// nodes, and returns once the loop has decided on them.
func checked(t *testing.T, cfg *webhook.Config, server string, nodes ...inject.Node) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	src := &nodeList{nodes: nodes, changed: make(chan struct{})}
	go func() {
		defer close(done)
		cfg.WatchCluster(ctx, webhook.ClusterSource{Nodes: src, Version: func(context.Context) (string, error) { return server, nil }}, time.Hour)
	}()
	t.Cleanup(func() { cancel(); <-done })
	for range 2 { // the second is taken once the first is handled
		select {
		case src.changed <- struct{}{}:
		case <-time.After(10 * time.Second):
			t.Fatal("the cluster loop did not read the cluster within 10 s")
		}
	}
}
