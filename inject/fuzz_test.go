package inject_test

import (
	"fmt"
	"testing"

	"github.com/job-signal/job-signal/internal/version"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/job-signal/job-signal/inject"
)

// picker turns fuzz bytes into choices; when the bytes run out it picks 0.
type picker struct{ data []byte }

func (p *picker) pick(n int) int {
	if len(p.data) == 0 || n <= 1 {
		return 0
	}
	b := p.data[0]
	p.data = p.data[1:]
	return int(b) % n
}

var (
	words       = []string{"sh", "-c", "echo $(A) $$B", "/app", "--x=1", "", "$", "--"}
	annotations = []string{"main", "ignore", "wait-for", "ready-timeout", "ready-tcp.c1", "ready-http.c1", "ready-file.c2",
		"after.c1", "after.c2", "stop-after.c1", "stop-after.c2", "quit-url.c2", "stop-signal", "grace", "grace.c1", "restart.c2", "bogus",
		"ready-exec.c1", "quit-url.c1", "ready-http.c2", "stop-signal.c1", "restart"}
	values = []string{"c0", "c1", "c2", "c1,c2", "", "10s", "127.0.0.1:80", "http://127.0.0.1/q", "/ready", "TERM", "Never", "x y",
		"http://10.0.0.1:8080/q", "QUIT", "Always", "45s"}
	targets = []inject.Target{pairMode, nativeMode, autoMode, {Mode: inject.ModeAuto}}
)

// list is nil, empty, or a few words.
func (p *picker) list() []string {
	switch n := p.pick(5); n {
	case 0:
		return nil
	case 1:
		return []string{}
	default:
		out := make([]string, n-1)
		for i := range out {
			out[i] = words[p.pick(len(words))]
		}
		return out
	}
}

// pod builds a Pod template of up to three containers, with the image
// configs a registry would answer for some of them.
func (p *picker) pod() (corev1.PodSpec, map[string]string, map[string]inject.ImageConfig) {
	spec := corev1.PodSpec{RestartPolicy: []corev1.RestartPolicy{corev1.RestartPolicyNever, corev1.RestartPolicyOnFailure, corev1.RestartPolicyAlways, ""}[p.pick(4)]}
	images := map[string]inject.ImageConfig{}
	for i := range 1 + p.pick(3) {
		c := corev1.Container{Name: fmt.Sprintf("c%d", i), Image: fmt.Sprintf("img%d", p.pick(3)), Command: p.list(), Args: p.list()}
		switch p.pick(3) {
		case 1:
			c.VolumeMounts = []corev1.VolumeMount{}
		case 2:
			c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
		}
		spec.Containers = append(spec.Containers, c)
		switch p.pick(4) {
		case 1:
			c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(80)}}, SuccessThreshold: int32(p.pick(3))}
		case 2:
			c.StartupProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}
		case 3:
			c.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}
		}
		if p.pick(2) == 1 {
			images[c.Image] = inject.ImageConfig{Entrypoint: p.list(), Cmd: p.list(), StopSignal: []string{"", "SIGQUIT", "3", "TERM"}[p.pick(4)]}
		}
	}
	switch p.pick(4) {
	case 1:
		spec.InitContainers = []corev1.Container{}
	case 2:
		spec.InitContainers = []corev1.Container{{Name: "setup", Image: "img0", Command: []string{"/setup"}}}
	case 3:
		always := corev1.ContainerRestartPolicyAlways
		spec.InitContainers = []corev1.Container{{Name: "c9", Image: "img0", RestartPolicy: &always}}
	}
	switch p.pick(3) {
	case 1:
		spec.Volumes = []corev1.Volume{}
	case 2:
		spec.Volumes = []corev1.Volume{{Name: "data"}}
	}
	var ann map[string]string
	for range p.pick(4) {
		if ann == nil {
			ann = map[string]string{"other.example/keep": "yes"}
		}
		ann[inject.Prefix+annotations[p.pick(len(annotations))]] = values[p.pick(len(values))]
	}
	return spec, ann, images
}

// FuzzInject checks, for every Pod template inject accepts in each mode
// (the pair, native, auto on a cluster with native sidecars and on one not
// known), that uninject(inject(x)) == x, inject(inject(x)) == inject(x),
// that an injected Pod needs no registry, and that injecting it in another
// mode gives what injecting x in that mode gives; and that nothing panics.
func FuzzInject(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})
	f.Add([]byte("\x00\x02\x03\x02\x01\x01\x04\x02\x03\x01\x02\x01\x02\x03\x00\x01"))
	f.Add([]byte("job-signal inject fuzz seed with several containers and annotations"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := &picker{data}
		spec, ann, images := p.pod()
		in := podTemplate(spec, ann)
		target, next := targets[p.pick(len(targets))], targets[p.pick(len(targets))]
		res, err := injectFor(in, images, target)
		if err != nil {
			return
		}
		roundTripsFor(t, in, res, target)
		want, err := injectFor(in, images, next)
		if err != nil || len(res.Ops) == 0 {
			return
		}
		got, err := injectFor(res.Template, images, next)
		if err != nil {
			t.Fatalf("inject %s after %s: %v", next.Mode, target.Mode, err)
		}
		if !sameJSON(t, got.Template, want.Template) {
			t.Fatalf("inject %s after %s:\n%s\nwant\n%s", next.Mode, target.Mode, got.Template, want.Template)
		}
	})
}

// FuzzUninject: whatever the record annotation holds, Uninject returns an
// error or a Pod, never panics.
func FuzzUninject(f *testing.F) {
	f.Add([]byte{1, 2, 3}, `{"v":1,"containers":[{"name":"c0","command":null,"args":null,"sum":"x"}]}`)
	f.Add([]byte{}, `not json`)
	f.Fuzz(func(t *testing.T, data []byte, record string) {
		p := &picker{data}
		spec, ann, images := p.pod()
		target := targets[p.pick(len(targets))]
		if res, err := injectFor(podTemplate(spec, ann), images, target); err == nil {
			spec, ann = res.Spec, res.Annotations
		}
		if ann == nil {
			ann = map[string]string{}
		}
		ann[inject.AnnotationInjected] = record
		inject.Uninject(podTemplate(spec, ann))
		if plan, err := inject.PrepareFor(podTemplate(spec, ann), target); err == nil {
			plan.Needs()
			plan.Inject(images, version.Image)
		}
	})
}
