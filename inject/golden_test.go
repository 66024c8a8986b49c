package inject_test

import (
	"encoding/json"
	"errors"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/job-signal/job-signal/inject"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/shapes")

// shape is one file of testdata/shapes: a Pod template and the image
// configs a registry would answer.
type shape struct {
	Annotations map[string]string             `json:"annotations,omitempty"`
	Images      map[string]inject.ImageConfig `json:"images,omitempty"`
	Spec        json.RawMessage               `json:"spec"`
}

// outcome is what a golden file holds.
type outcome struct {
	Form     inject.Form     `json:"form,omitempty"`
	Reason   string          `json:"reason,omitempty"`
	Error    string          `json:"error,omitempty"`
	Nothing  string          `json:"nothing,omitempty"`
	Warnings []string        `json:"warnings,omitempty"`
	Template json.RawMessage `json:"template,omitempty"`
}

// TestShapes injects each Pod shape of testdata/shapes, as the pair
// (NAME.golden.yaml), as native sidecars (NAME.native.golden.yaml) and in
// mode auto (NAME.auto.golden.yaml) on a cluster that has them, and
// compares with the golden files (go test ./inject -run TestShapes
// -update rewrites them), then checks the properties every injection must
// have.
func TestShapes(t *testing.T) {
	inputs, err := filepath.Glob("testdata/shapes/*.in.yaml")
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no shapes: %v", err)
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".in.yaml")
		for _, v := range []struct {
			suffix string
			target inject.Target
		}{{"", pairMode}, {".native", nativeMode}, {".auto", autoMode}} {
			t.Run(name+v.suffix, func(t *testing.T) {
				s, data := readShape(t, in)
				got := injectShape(t, s, data, v.target)
				if v.target.Mode == inject.ModePair {
					got.Form, got.Reason = "", ""
				}
				compareGolden(t, strings.TrimSuffix(in, ".in.yaml")+v.suffix+".golden.yaml", got)
			})
		}
	}
}

// readShape reads a shape and its template's JSON.
func readShape(t *testing.T, path string) (shape, []byte) {
	t.Helper()
	var s shape
	readYAML(t, path, &s)
	tmpl := map[string]any{"spec": s.Spec}
	if s.Annotations != nil {
		tmpl["metadata"] = map[string]any{"annotations": s.Annotations}
	}
	data, _ := json.Marshal(tmpl)
	return s, data
}

// injectShape injects a shape for target and checks what every injection
// must give: the images it needs are the ones it uses, uninject gives the
// input back, injecting again changes nothing.
func injectShape(t *testing.T, s shape, data []byte, target inject.Target) outcome {
	t.Helper()
	plan, err := inject.PrepareFor(data, target)
	switch {
	case err != nil:
		return outcome{Error: err.Error()}
	case plan.Nothing() != "":
		return outcome{Nothing: plan.Nothing()}
	}
	res, err := injectFor(data, s.Images, target)
	if err != nil {
		return outcome{Error: err.Error()}
	}
	for _, n := range plan.Needs() {
		if _, ok := s.Images[n.Image]; !ok {
			t.Errorf("Needs lists %v, which the shape has no image config for", n)
		}
	}
	roundTripsFor(t, data, res, target)
	if res.Form == inject.FormPair {
		checkFlags(t, res.Spec)
		if target.Mode == inject.ModePair {
			checkByHand(t, res)
		}
	}
	return outcome{Form: res.Form, Reason: res.Reason, Warnings: res.Warnings, Template: res.Template}
}

// checkByHand: the same Pod injected by hand (no record): uninject turns
// the flags into annotations, and injecting that gives the same Pod again.
func checkByHand(t *testing.T, res injected) {
	t.Helper()
	hand := maps.Clone(res.Annotations)
	delete(hand, inject.AnnotationInjected)
	data := podTemplate(res.Spec, hand)
	undo, err := inject.Uninject(data)
	if err != nil {
		t.Fatalf("uninject without the record: %v", err)
	}
	plain, err := inject.Apply(data, undo.Ops)
	if err != nil {
		t.Fatal(err)
	}
	redone, err := injectTemplate(plain, nil)
	if err != nil {
		t.Fatalf("inject after unwrapping: %v", err)
	}
	a, _ := json.Marshal(res.Spec)
	b, _ := json.Marshal(redone.Spec)
	if !sameJSON(t, a, b) {
		t.Errorf("inject(uninject(x by hand)) != x:\n%s\n%s", a, b)
	}
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(b, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func compareGolden(t *testing.T, path string, got outcome) {
	t.Helper()
	b, err := yaml.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./inject -run TestShapes -update to create it)", err)
	}
	if string(want) != string(b) {
		t.Errorf("%s differs (run with -update after checking the change):\n--- got\n%s\n--- want\n%s", path, b, want)
	}
}

// TestShapesAcrossModes: injecting an injected template in another mode
// gives what injecting the original in that mode gives (the old form
// taken out, the new one put in), for every shape and every pair of
// modes.
func TestShapesAcrossModes(t *testing.T) {
	inputs, _ := filepath.Glob("testdata/shapes/*.in.yaml")
	targets := map[string]inject.Target{"pair": pairMode, "native": nativeMode, "auto": autoMode}
	n := 0
	for _, in := range inputs {
		s, data := readShape(t, in)
		direct := map[string]injected{}
		for name, target := range targets {
			if res, err := injectFor(data, s.Images, target); err == nil && len(res.Ops) > 0 {
				direct[name] = res
			}
		}
		for from, first := range direct {
			for to, want := range direct {
				t.Run(filepath.Base(in)+"/"+from+"-to-"+to, func(t *testing.T) {
					got, err := injectFor(first.Template, s.Images, targets[to])
					if err != nil {
						t.Fatalf("inject %s after %s: %v", to, from, err)
					}
					if !sameJSON(t, got.Template, want.Template) {
						t.Fatalf("inject %s after %s:\n%s\nwant\n%s", to, from, got.Template, want.Template)
					}
					if len(got.Ops) > 0 && got.Form != want.Form || len(got.Ops) == 0 && got.Form != "" {
						t.Errorf("form %q after %d ops, want %q", got.Form, len(got.Ops), want.Form)
					}
				})
				n++
			}
		}
	}
	if n < 30 {
		t.Fatalf("only %d conversions checked", n)
	}
}

// TestNeedsNative: a Pod given native sidecars needs no image, not even
// for a container without a command, unless a sidecar asks for a stop
// signal: then its image's STOPSIGNAL decides, and Needs lists it (and
// what the pair would need, should it decide the pair).
func TestNeedsNative(t *testing.T) {
	for _, tc := range []struct {
		shape  string
		target inject.Target
		want   []string
	}{
		{"no-command", nativeMode, nil},
		// auto: the pair, agent not being known to stop promptly.
		{"no-command", autoMode, []string{"job", "agent"}},
		{"no-command", inject.Target{Mode: inject.ModeAuto}, []string{"job", "agent"}},
		{"native-stop-signal", nativeMode, []string{"web"}},
		{"native-stop-signal", pairMode, nil},
		{"native-probe-proxy", autoMode, nil},
		{"native-probe-proxy", pairMode, []string{"proxy"}},
	} {
		t.Run(tc.shape+"/"+string(tc.target.Mode), func(t *testing.T) {
			_, data := readShape(t, "testdata/shapes/"+tc.shape+".in.yaml")
			plan, err := inject.PrepareFor(data, tc.target)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, n := range plan.Needs() {
				got = append(got, n.Container)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Needs lists %v, want %v", got, tc.want)
			}
		})
	}
}

// TestUninjectNativeEdited: a native Pod whose moved sidecar is gone from
// initContainers, or lost what inject added, is refused with what
// happened, never half restored.
func TestUninjectNativeEdited(t *testing.T) {
	s, data := readShape(t, "testdata/shapes/native-exec-and-hooks.in.yaml")
	res, err := injectFor(data, s.Images, nativeMode)
	if err != nil || res.Form != inject.FormNative {
		t.Fatalf("%v %s", err, res.Form)
	}
	for name, edit := range map[string]func(*corev1.PodSpec){
		"sidecar removed":      func(p *corev1.PodSpec) { p.InitContainers = p.InitContainers[:1] },
		"startupProbe removed": func(p *corev1.PodSpec) { p.InitContainers[0].StartupProbe = nil },
		"preStop removed":      func(p *corev1.PodSpec) { p.InitContainers[1].Lifecycle.PreStop = nil },
	} {
		t.Run(name, func(t *testing.T) {
			spec, ann := decodeTemplate(res.Template)
			edit(&spec)
			if _, err := inject.Uninject(podTemplate(spec, ann)); err == nil || !strings.Contains(err.Error(), "edited after injection") {
				t.Fatalf("got %v, want an error saying the Pod was edited", err)
			}
		})
	}
}

// TestTargetModes: the zero Target is the pair; a mode that is none of
// pair, native and auto is an error naming them.
func TestTargetModes(t *testing.T) {
	_, data := readShape(t, "testdata/shapes/classic-sidecar.in.yaml")
	res, err := injectFor(data, nil, inject.Target{})
	if err != nil || res.Form != inject.FormPair {
		t.Fatalf("zero Target: %v %q", err, res.Form)
	}
	if _, err := inject.PrepareFor(data, inject.Target{Mode: "sidecar"}); err == nil || !strings.Contains(err.Error(), "pair, native or auto") {
		t.Fatalf("mode sidecar: %v", err)
	}
}

// TestStopSignalNotFound: when the image whose STOPSIGNAL decides was not
// found, auto gives the pair and says why; native refuses.
func TestStopSignalNotFound(t *testing.T) {
	_, data := readShape(t, "testdata/shapes/native-stop-signal.in.yaml")
	res, err := injectFor(data, nil, autoMode)
	if err != nil || res.Form != inject.FormPair || !strings.Contains(res.Reason, `its image's STOPSIGNAL is not known`) {
		t.Fatalf("auto: %v %q %q", err, res.Form, res.Reason)
	}
	if _, err := injectFor(data, nil, nativeMode); !errors.Is(err, inject.ErrNotNative) {
		t.Fatalf("native: %v", err)
	}
}

// TestReadyTimeout: main's ready-timeout keeps the pair (a native sidecar
// that is never ready cannot fail the Pod), except 0, which waits for
// ever as a native sidecar does.
func TestReadyTimeout(t *testing.T) {
	grace := int64(10) // no longer than the pair's: slowStop has nothing to say
	spec := corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, TerminationGracePeriodSeconds: &grace, Containers: []corev1.Container{
		{Name: "job", Image: "busybox", Command: []string{"/job"}}, {Name: "proxy", Image: "busybox", Command: []string{"/proxy"}}}}
	for value, want := range map[string]inject.Form{"2m": inject.FormPair, "0s": inject.FormNative, "0": inject.FormNative} {
		res, err := injectFor(podTemplate(spec, map[string]string{inject.Prefix + "main": "job", inject.Prefix + "ready-timeout": value}), nil, autoMode)
		if err != nil || res.Form != want {
			t.Errorf("ready-timeout %s: %v %q (%s), want %q", value, err, res.Form, res.Reason, want)
		}
	}
}
