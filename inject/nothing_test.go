package inject_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/version"
)

// TestNoSidecarNothingToDo: a Pod with no sidecar is left unchanged,
// whether its job has a command or not, whatever else it has (init
// containers, native sidecars, containers ignored); a Pod with one
// sidecar is injected. The webhook and the plugin both ask Plan.Nothing.
func TestNoSidecarNothingToDo(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	job := corev1.Container{Name: "job", Image: "registry.example/job:1", Command: []string{"/job"}}
	noCommand := corev1.Container{Name: "job", Image: "registry.example/job:1"}
	proxy := corev1.Container{Name: "proxy", Image: "registry.example/proxy:1", Command: []string{"/proxy"}}
	migrate := corev1.Container{Name: "migrate", Image: "registry.example/migrate:1", Command: []string{"/migrate"}}
	mesh := corev1.Container{Name: "mesh", Image: "registry.example/mesh:1", Command: []string{"/mesh"}, RestartPolicy: &always}
	mesh2 := mesh
	mesh2.Name = "mesh2"
	for _, tc := range []struct {
		name        string
		annotations map[string]string
		init        []corev1.Container
		containers  []corev1.Container
		want        string // in Nothing(); "" the Pod is injected
	}{
		{name: "one container, no command", containers: []corev1.Container{noCommand}, want: `one container ("job") and no sidecar`},
		{name: "one container with a command", containers: []corev1.Container{job}, want: `one container ("job") and no sidecar`},
		{name: "one container and an init container", init: []corev1.Container{migrate}, containers: []corev1.Container{job}, want: `one container ("job") and no sidecar`},
		{name: "one container and a native sidecar", init: []corev1.Container{migrate, mesh}, containers: []corev1.Container{job},
			want: `one container ("job"), and its sidecar "mesh" is native (an init container with restartPolicy Always): Kubernetes stops it when the job ends, nothing to do`},
		{name: "one container and native sidecars", init: []corev1.Container{mesh, mesh2}, containers: []corev1.Container{job},
			want: `one container ("job"), and its sidecars "mesh", "mesh2" are native (init containers with restartPolicy Always): Kubernetes stops them when the job ends, nothing to do`},
		{name: "every other container ignored", annotations: map[string]string{inject.Prefix + "ignore": "migrate"},
			containers: []corev1.Container{job, migrate}, want: `no sidecar: every container but the job ("job") is ignored`},
		{name: "every other container ignored, beside a native sidecar", annotations: map[string]string{inject.Prefix + "ignore": "migrate"},
			init: []corev1.Container{mesh}, containers: []corev1.Container{job, migrate},
			want: `every container but the job ("job") is ignored (job-signal.dev/ignore), and its sidecar "mesh" is native`},
		{name: "a sidecar", containers: []corev1.Container{job, proxy}},
		{name: "a sidecar and an ignored container", annotations: map[string]string{inject.Prefix + "ignore": "migrate", inject.Prefix + "main": "job"},
			containers: []corev1.Container{job, proxy, migrate}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := podTemplate(corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, InitContainers: tc.init, Containers: tc.containers}, tc.annotations)
			plan, err := inject.Prepare(raw)
			if err != nil {
				t.Fatal(err)
			}
			got := plan.Nothing()
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Fatalf("Nothing() = %q, want %q", got, tc.want)
			}
			if tc.want != "" && len(plan.Needs()) > 0 {
				t.Errorf("a Pod left unchanged needs images: %v", plan.Needs())
			}
			res, err := plan.Inject(nil, version.Image)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want != "" && len(res.Ops) > 0 || tc.want == "" && len(res.Ops) == 0 {
				t.Errorf("Nothing() %q and %d ops", got, len(res.Ops))
			}
		})
	}
}

// TestNoSidecarAnyMore: a template injected when it had a sidecar, whose
// sidecar is ignored since, has job-signal taken out on injecting again,
// as injecting the original would leave it: no layout left behind.
func TestNoSidecarAnyMore(t *testing.T) {
	spec := corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{
		{Name: "job", Image: "registry.example/job:1", Command: []string{"/job"}},
		{Name: "migrate", Image: "registry.example/migrate:1", Command: []string{"/migrate"}}}}
	first, err := injectSpec(spec, map[string]string{inject.Prefix + "main": "job"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	first.Annotations[inject.Prefix+"ignore"] = "migrate"
	changed := podTemplate(first.Spec, first.Annotations)
	again, err := injectTemplate(changed, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := podTemplate(spec, map[string]string{inject.Prefix + "main": "job", inject.Prefix + "ignore": "migrate"})
	if !sameJSON(t, again.Template, want) {
		t.Errorf("injected again:\n%s\nwant the original:\n%s", again.Template, want)
	}
	if len(again.Warnings) != 1 || !strings.Contains(again.Warnings[0], "job-signal taken out: no sidecar") {
		t.Errorf("warnings %q", again.Warnings)
	}
}
