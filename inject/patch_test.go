package inject

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

// Patch writes, byte for byte, what json.Marshal writes for the ops
// through their MarshalJSON: for every shape of testdata/shapes and for
// values with every kind of character json.Marshal escapes.
func TestPatchSameAsMarshal(t *testing.T) {
	var cases [][]Op
	for _, sh := range injectableShapes(t) {
		cases = append(cases, sh.ops)
	}
	if len(cases) < 10 {
		t.Fatalf("only %d shapes injected", len(cases))
	}
	tricky := "a<b>&c \"q\" \\\\ \t\n\x01 é \u2028\u2029 \xff end"
	cases = append(cases, []Op{
		{Op: "add", Path: "/metadata/annotations/" + tricky, Value: tricky},
		{Op: "replace", Path: "/spec/x", Value: Fields{{"name", tricky}, {"list", []any{Fields{{"k", []string{tricky}}}, nil, true, false, json.Number("1.50")}},
			{"map", map[string]any{"z": 1, "a": Fields{}, tricky: []any(nil)}}, {"nilmap", map[string]any(nil)}, {"none", Fields(nil)},
			{"resources", corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}},
		{Op: "remove", Path: "/spec/" + tricky},
		{Op: "move", From: "/spec/containers/0/command", Path: "/spec/containers/0/args"},
		{Op: "add", Path: "/spec/v", Value: nil},
		{Op: "add", Path: "/spec/w", Value: []any{}},
	})
	for i, ops := range cases {
		want, err := marshal(ops)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Patch(ops)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("case %d: Patch wrote\n%s\njson.Marshal\n%s", i, got, want)
		}
	}
	if !strings.Contains(string(mustPatch(t, cases[len(cases)-1])), `\u003c`) {
		t.Error("the tricky case lost its HTML escapes")
	}
}

func mustPatch(t *testing.T, ops []Op) []byte {
	b, err := Patch(ops)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// injectableShape is a shape of testdata/shapes that inject injects: its
// template (JSON), image configs, and inject's ops.
type injectableShape struct {
	name   string
	data   []byte
	images map[string]ImageConfig
	ops    []Op
}

func injectableShapes(t *testing.T) []injectableShape {
	t.Helper()
	inputs, _ := filepath.Glob("testdata/shapes/*.in.yaml")
	var out []injectableShape
	for _, in := range inputs {
		b, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		var s struct {
			Annotations map[string]string      `json:"annotations,omitempty"`
			Images      map[string]ImageConfig `json:"images,omitempty"`
			Spec        json.RawMessage        `json:"spec"`
		}
		if err := yaml.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		tmpl := map[string]any{"spec": s.Spec}
		if s.Annotations != nil {
			tmpl["metadata"] = map[string]any{"annotations": s.Annotations}
		}
		data, _ := json.Marshal(tmpl)
		plan, err := Prepare(data)
		if err != nil || plan.Nothing() != "" {
			continue
		}
		res, err := plan.Inject(s.Images, "ghcr.io/job-signal/job-signal:v1")
		if err != nil {
			continue
		}
		out = append(out, injectableShape{name: in, data: data, images: s.Images, ops: res.Ops})
	}
	return out
}
