package inject_test

import (
	"flag"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/job-signal/job-signal/internal/version"

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
	Spec        corev1.PodSpec                `json:"spec"`
}

// outcome is what a golden file holds.
type outcome struct {
	Error       string            `json:"error,omitempty"`
	Warnings    []string          `json:"warnings,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Spec        *corev1.PodSpec   `json:"spec,omitempty"`
}

// TestShapes injects each Pod shape of testdata/shapes and compares with
// its golden file (go test ./inject -run TestShapes -update rewrites
// them), then checks the properties every injection must have.
func TestShapes(t *testing.T) {
	inputs, err := filepath.Glob("testdata/shapes/*.in.yaml")
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no shapes: %v", err)
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".in.yaml")
		t.Run(name, func(t *testing.T) {
			var s shape
			readYAML(t, in, &s)
			res, err := inject.Inject(inject.Input{Spec: s.Spec, Annotations: s.Annotations, Images: s.Images, Installer: version.Image})
			var got outcome
			if err != nil {
				got.Error = err.Error()
			} else {
				got = outcome{Warnings: res.Warnings, Annotations: res.Annotations, Spec: &res.Spec}
				checkProperties(t, s, res)
			}
			compareGolden(t, strings.TrimSuffix(in, ".in.yaml")+".golden.yaml", got)
		})
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

func compareGolden(t *testing.T, path string, got any) {
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

// checkProperties: uninject restores the input exactly, injecting again
// changes nothing, Needs names the containers that used an image, and
// every wrapped command parses with the real programs' flags.
func checkProperties(t *testing.T, s shape, res inject.Result) {
	t.Helper()
	roundTrips(t, s.Spec, s.Annotations, res)
	needs, err := inject.Needs(s.Spec, s.Annotations)
	if err != nil {
		t.Fatalf("needs: %v", err)
	}
	for _, n := range needs {
		if _, ok := s.Images[n.Image]; !ok {
			t.Errorf("Needs lists %v, which the shape has no image config for", n)
		}
	}
	checkFlags(t, res.Spec)

	// The same Pod injected by hand (no record): uninject turns the flags
	// into annotations, and injecting that gives the same Pod again.
	hand := maps.Clone(res.Annotations)
	delete(hand, inject.AnnotationInjected)
	unwrapped, err := inject.Uninject(res.Spec, hand)
	if err != nil {
		t.Fatalf("uninject without the record: %v", err)
	}
	redone, err := inject.Inject(inject.Input{Spec: unwrapped.Spec, Annotations: unwrapped.Annotations, Installer: version.Image})
	if err != nil {
		t.Fatalf("inject after unwrapping: %v", err)
	}
	if diff := specDiff(res.Spec, nil, redone.Spec, nil); diff != "" {
		t.Errorf("inject(uninject(x by hand)) != x:\n%s", diff)
	}
}
