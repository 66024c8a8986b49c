package inject_test

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/version"
)

// podTemplate is the JSON of a Pod template with spec and annotations.
func podTemplate(spec corev1.PodSpec, annotations map[string]string) []byte {
	t := map[string]any{"spec": spec}
	if annotations != nil {
		t["metadata"] = map[string]any{"annotations": annotations}
	}
	b, err := json.Marshal(t)
	if err != nil {
		panic(err)
	}
	return b
}

// injected is a template after Inject, decoded.
type injected struct {
	Template    []byte
	Spec        corev1.PodSpec
	Annotations map[string]string
	Warnings    []string
	Ops         []inject.Op
	Form        inject.Form
	Reason      string
}

// injectTemplate prepares and injects a template (JSON) and applies the
// changes, as the webhook's API server would.
func injectTemplate(data []byte, images map[string]inject.ImageConfig) (injected, error) {
	return injectFor(data, images, pairMode)
}

// The targets the tests inject for: the pair; native sidecars and auto on
// a cluster that has them.
var (
	pairMode   = inject.Target{Mode: inject.ModePair}
	nativeMode = inject.Target{Mode: inject.ModeNative, Cluster: modern}
	autoMode   = inject.Target{Mode: inject.ModeAuto, Cluster: modern}
	modern     = inject.Cluster{Known: true, NativeSidecars: true, Version: "v1.37.2"}
)

// injectFor is injectTemplate for target.
func injectFor(data []byte, images map[string]inject.ImageConfig, target inject.Target) (injected, error) {
	plan, err := inject.PrepareFor(data, target)
	if err != nil {
		return injected{}, err
	}
	res, err := plan.Inject(images, version.Image)
	if err != nil {
		return injected{}, err
	}
	out, err := inject.Apply(data, res.Ops)
	if err != nil {
		return injected{}, err
	}
	r := injected{Template: out, Warnings: res.Warnings, Ops: res.Ops, Form: res.Form, Reason: res.Reason}
	r.Spec, r.Annotations = decodeTemplate(out)
	return r, nil
}

func injectSpec(spec corev1.PodSpec, annotations map[string]string, images map[string]inject.ImageConfig) (injected, error) {
	return injectTemplate(podTemplate(spec, annotations), images)
}

func decodeTemplate(data []byte) (corev1.PodSpec, map[string]string) {
	var t corev1.PodTemplateSpec
	if err := json.Unmarshal(data, &t); err != nil {
		panic(err)
	}
	return t.Spec, t.Annotations
}

// sameJSON compares two JSON documents by value.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}

// roundTrips checks, for out = inject(in), that uninject(out) is in again
// (null, [] and absent kept apart), that injecting out changes nothing
// and needs no image lookup.
func roundTrips(t *testing.T, in []byte, out injected) {
	t.Helper()
	roundTripsFor(t, in, out, pairMode)
}

// roundTripsFor is roundTrips for out = inject(in) for target.
func roundTripsFor(t *testing.T, in []byte, out injected, target inject.Target) {
	t.Helper()
	undo, err := inject.Uninject(out.Template)
	if err != nil {
		t.Fatalf("uninject: %v", err)
	}
	back, err := inject.Apply(out.Template, undo.Ops)
	if err != nil {
		t.Fatalf("apply uninject: %v", err)
	}
	if !sameJSON(t, in, back) {
		t.Fatalf("uninject(inject(x)) != x:\n%s\n%s", in, back)
	}
	plan, err := inject.PrepareFor(out.Template, target)
	if err != nil {
		t.Fatalf("prepare again: %v", err)
	}
	if needs := plan.Needs(); len(needs) > 0 {
		t.Fatalf("an injected Pod needs %v", needs)
	}
	again, err := plan.Inject(nil, version.Image)
	if err != nil {
		t.Fatalf("inject again (without images: none must be needed): %v", err)
	}
	if len(again.Ops) > 0 {
		b, _ := inject.Patch(again.Ops)
		t.Fatalf("inject(inject(x)) changes %s", b)
	}
}
