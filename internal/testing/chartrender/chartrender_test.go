package chartrender

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// writeChart lays out a chart in a temporary folder: Chart.yaml, values.yaml
// and the given templates.
func writeChart(t *testing.T, values string, templates map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "demo")
	files := map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: demo\nversion: 0.1.0\nkubeVersion: \">=1.30.0-0\"\n",
		"values.yaml": values,
	}
	for name, text := range templates {
		files[filepath.Join("templates", name)] = text
	}
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const configMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-{{ .Values.name }}
  namespace: {{ .Release.Namespace }}
data:
  kube: {{ .Capabilities.KubeVersion.Version | quote }}
  install: {{ .Release.IsInstall | quote }}
`

// TestTemplate: helm template's layout. Manifests in Helm's install order
// (the ServiceAccount before the ConfigMap, whatever the file names), each
// after "---" and its source, then hooks, NOTES.txt left out; release,
// namespace and Kubernetes version as given.
func TestTemplate(t *testing.T) {
	dir := writeChart(t, "name: cfg\n", map[string]string{
		"a-configmap.yaml": configMap,
		"b-sa.yaml":        "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\n",
		"c-hook.yaml":      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: hook\n  annotations:\n    helm.sh/hook: pre-delete\n",
		"NOTES.txt":        "installed {{ .Release.Name }}\n",
		"_helpers.tpl":     `{{- define "x" }}y{{ end }}`,
	})
	got, err := Template(dir, Options{Release: "rel", Namespace: "ns", KubeVersion: "v1.33.1"})
	if err != nil {
		t.Fatal(err)
	}
	want := `---
# Source: demo/templates/b-sa.yaml
apiVersion: v1
kind: ServiceAccount
metadata:
  name: sa
---
# Source: demo/templates/a-configmap.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: rel-cfg
  namespace: ns
data:
  kube: "v1.33.1"
  install: "true"
---
# Source: demo/templates/c-hook.yaml
apiVersion: v1
kind: Pod
metadata:
  name: hook
  annotations:
    helm.sh/hook: pre-delete
`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestTemplateRefuses: the chart's kubeVersion range, a value the schema
// refuses, a template's fail and a missing KubeVersion are errors.
func TestTemplateRefuses(t *testing.T) {
	dir := writeChart(t, "name: cfg\n", map[string]string{
		"a.yaml": configMap + `{{- if eq .Values.name "bad" }}{{ fail "name must not be bad" }}{{ end }}` + "\n",
	})
	schema := `{"type": "object", "properties": {"name": {"type": "string"}}}`
	if err := os.WriteFile(filepath.Join(dir, "values.schema.json"), []byte(schema), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{KubeVersion: "v1.29.0"}, "incompatible with Kubernetes v1.29.0"},
		{Options{KubeVersion: "v1.33.0", Set: []string{"name=bad"}}, "name must not be bad"},
		{Options{KubeVersion: "v1.33.0", Set: []string{"name[0]=x"}}, "schema"},
		{Options{}, "no KubeVersion"},
	} {
		if _, err := Template(dir, tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error with %q", tc.o, err, tc.want)
		}
	}
}

// TestValues: files merge in order, maps key by key, and --set pairs
// come last, as on helm's command line.
func TestValues(t *testing.T) {
	dir := t.TempDir()
	first, second := filepath.Join(dir, "1.yaml"), filepath.Join(dir, "2.yaml")
	if err := os.WriteFile(first, []byte("a: {b: 1, c: 2}\nd: [1]\ne: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(second, []byte("a: {c: 3}\nd: [2]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Options{Values: []string{first, second}, Set: []string{"e=y", "a.f=4"}}.values()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": map[string]any{"b": float64(1), "c": float64(3), "f": int64(4)}, "d": []any{float64(2)}, "e": "y"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v\nwant %#v", got, want)
	}
	if _, err := (Options{Values: []string{filepath.Join(dir, "none.yaml")}}).values(); err == nil || !strings.Contains(err.Error(), "--values") {
		t.Errorf("a missing values file: %v", err)
	}
}

// TestLint: --strict fails on a warning (an API removed in the Kubernetes
// linted for), not on informational messages (no icon), and passes the
// same chart linted for a Kubernetes that still serves that API.
func TestLint(t *testing.T) {
	clean := writeChart(t, "name: cfg\n", map[string]string{"a.yaml": configMap})
	if err := Lint(clean, Options{Namespace: "ns", KubeVersion: "v1.33.0"}); err != nil {
		t.Errorf("a clean chart: %v", err)
	}
	removed := writeChart(t, "name: cfg\n", map[string]string{
		"pdb.yaml": "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata:\n  name: x\nspec:\n  minAvailable: 1\n",
	})
	err := Lint(removed, Options{Namespace: "ns", KubeVersion: "v1.33.0"})
	if err == nil || !strings.Contains(err.Error(), "[WARNING]") || !strings.Contains(err.Error(), "policy/v1beta1") {
		t.Errorf("policy/v1beta1 on 1.33: %v, want a warning", err)
	}
	if err := Lint(removed, Options{Namespace: "ns", KubeVersion: "v1.20.0"}); err != nil {
		t.Errorf("policy/v1beta1 on 1.20: %v, want no warning", err)
	}
	if err := Lint(filepath.Dir(clean), Options{KubeVersion: "v1.33.0"}); err == nil {
		t.Error("a folder without Chart.yaml passed")
	}
}

// TestKustomize: a kustomization's resources built with its namespace.
func TestKustomize(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"kustomization.yaml": "namespace: ns\nresources:\n- sa.yaml\n",
		"sa.yaml":            "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Kustomize(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\n  namespace: ns\n"; got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if _, err := Kustomize(t.TempDir()); err == nil || !strings.Contains(err.Error(), "kustomize build") {
		t.Errorf("a folder without a kustomization: %v", err)
	}
}
