package inject_test

import (
	"encoding/json"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/job-signal/job-signal/inject"
)

// linkerdAdds is what Linkerd's proxy injector adds to a Pod at its
// admission (charts/partials/templates/_proxy.tpl, _proxy-init.tpl):
// linkerd-init first among the init containers, linkerd-proxy among the
// containers, with no command (its image's ENTRYPOINT runs) and its
// readinessProbe on the admin port.
func linkerdAdds(spec *corev1.PodSpec) {
	spec.InitContainers = append([]corev1.Container{{Name: "linkerd-init", Image: "cr.l5d.io/linkerd/proxy-init:v2.4.1",
		Args: []string{"--incoming-proxy-port", "4143", "--outgoing-proxy-port", "4140", "--proxy-uid", "2102", "--inbound-ports-to-ignore", "4190,4191"}}},
		spec.InitContainers...)
	spec.Containers = append(spec.Containers, corev1.Container{Name: "linkerd-proxy", Image: "cr.l5d.io/linkerd/proxy:stable-2.14.10",
		Ports:          []corev1.ContainerPort{{Name: "linkerd-proxy", ContainerPort: 4143}, {Name: "linkerd-admin", ContainerPort: 4191}},
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(4191)}}, InitialDelaySeconds: 2},
		Env:            []corev1.EnvVar{{Name: "LINKERD2_PROXY_ADMIN_LISTEN_ADDR", Value: "0.0.0.0:4191"}}})
}

// TestContainerAddedAfterInjection: a Pod injected by the plugin (its
// Job's template), to which a webhook called after job-signal's adds a
// container, is injected again at its admission covering the new
// container exactly as if it had been in the template: in the pair and
// in native sidecars, whichever form the plugin wrote.
func TestContainerAddedAfterInjection(t *testing.T) {
	images := map[string]inject.ImageConfig{"cr.l5d.io/linkerd/proxy:stable-2.14.10": {Entrypoint: []string{"/usr/lib/linkerd/linkerd2-proxy"}}}
	grace := int64(10)
	source := corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, TerminationGracePeriodSeconds: &grace, Containers: []corev1.Container{
		{Name: "export", Image: "registry.example/export:1", Command: []string{"/export"}},
		{Name: "cloud-sql-proxy", Image: "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14.1", Command: []string{"/cloud-sql-proxy", "--port=5432", "p:r:i"}}}}
	for _, tc := range []struct {
		name       string
		plugin, at inject.Target // the plugin's target, the webhook's
		form       inject.Form
	}{
		{"the pair", pairMode, pairMode, inject.FormPair},
		{"the pair, then auto", pairMode, autoMode, inject.FormNative},
		{"native sidecars", autoMode, autoMode, inject.FormNative},
		{"native sidecars, then the pair", autoMode, pairMode, inject.FormPair},
	} {
		t.Run(tc.name, func(t *testing.T) {
			byPlugin, err := injectFor(podTemplate(source, nil), nil, tc.plugin)
			if err != nil {
				t.Fatal(err)
			}
			// The Pod as the webhook sees it: the Job's injected template,
			// then Linkerd's additions.
			admitted := byPlugin.Spec
			linkerdAdds(&admitted)
			got, err := injectFor(podTemplate(admitted, byPlugin.Annotations), images, tc.at)
			if err != nil {
				t.Fatalf("inject at admission: %v", err)
			}
			// As if linkerd-proxy had been in the template.
			whole := *source.DeepCopy()
			linkerdAdds(&whole)
			want, err := injectFor(podTemplate(whole, nil), images, tc.at)
			if err != nil {
				t.Fatal(err)
			}
			// The pair's job-signal-install stays where the plugin put it
			// (first, then linkerd-init added before it): init containers
			// that run to completion, in either order.
			a, b := normalInits(got), normalInits(want)
			if got.Form != tc.form || !slices.Equal(a, b) {
				t.Fatalf("form %q:\n%s\nwant %q, as injecting it whole gives:\n%s", got.Form, a[1], tc.form, b[1])
			}
			covered := slices.ContainsFunc(append(got.Spec.InitContainers, got.Spec.Containers...), func(c corev1.Container) bool {
				return c.Name == "linkerd-proxy" && (c.RestartPolicy != nil || len(c.Command) > 0 && c.Command[0] == inject.SidecarWatchPath)
			})
			if !covered {
				t.Errorf("linkerd-proxy is neither a native sidecar nor under sidecar-watch: %+v", got.Spec)
			}
		})
	}
}

// normalInits is an injected template's annotations and spec as JSON, its
// init containers that run to completion (no restartPolicy) sorted by
// name, the others in place.
func normalInits(in injected) []string {
	spec := *in.Spec.DeepCopy()
	slices.SortStableFunc(spec.InitContainers, func(a, b corev1.Container) int {
		switch {
		case a.RestartPolicy != nil || b.RestartPolicy != nil:
			return 0
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	ann, _ := json.Marshal(in.Annotations)
	s, _ := json.Marshal(spec)
	return []string{string(ann), string(s)}
}

// TestIstioClassicOn133: Istio's classic injection output (the shape
// istio-classic) in mode auto on a cluster of 1.33, API server and
// kubelets: native sidecars with the proxy first, after istio-init, then
// logs, whose startupProbe (its readinessProbe, rewritten to the proxy's
// status port) the proxy serves; a node still on 1.32 keeps the pair.
func TestIstioClassicOn133(t *testing.T) {
	s, data := readShape(t, "testdata/shapes/istio-classic.in.yaml")
	on := func(kubelet string) inject.Target {
		return inject.Target{Mode: inject.ModeAuto, Cluster: inject.ClusterFrom("v1.33.0", []inject.Node{{Name: "a", KubeletVersion: "v1.33.0"}, {Name: "b", KubeletVersion: kubelet}})}
	}
	got, err := injectFor(data, s.Images, on("v1.33.2"))
	if err != nil {
		t.Fatal(err)
	}
	var inits []string
	for _, c := range got.Spec.InitContainers {
		inits = append(inits, c.Name)
	}
	if got.Form != inject.FormNative || !slices.Equal(inits, []string{"istio-init", "istio-proxy", "logs"}) {
		t.Fatalf("form %q, init containers %v: want native sidecars, istio-proxy before logs", got.Form, inits)
	}
	if p := got.Spec.InitContainers[2].StartupProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Port.IntVal != 15020 {
		t.Errorf("logs' startupProbe %+v: want its rewritten readinessProbe, on 15020", p)
	}
	old, err := injectFor(data, s.Images, on("v1.32.9"))
	if err != nil || old.Form != inject.FormPair || old.Reason != "pair: node b's kubelet is v1.32.9, before 1.33" {
		t.Errorf("a node on 1.32: %v %q %q, want the pair saying which node", err, old.Form, old.Reason)
	}
}
