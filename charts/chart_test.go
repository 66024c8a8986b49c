// Package charts holds the Helm chart of job-signal-webhook and these tests
// of it: helm lint, and helm template's output for each value set of the
// chart's ci/ folder against a golden file in testdata/ (go test ./charts
// -update rewrites them, and manifests/webhook/webhook.yaml, which is the
// chart rendered for kubectl apply -k). Helm's own packages render and
// lint the chart in this process (internal/testing/chartrender), for the
// newest Kubernetes make e2e pins.
package charts_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/job-signal/job-signal/internal/testing/chartrender"
	"github.com/job-signal/job-signal/internal/version"
)

var update = flag.Bool("update", false, "rewrite the goldens and manifests/webhook/webhook.yaml from the chart")

const (
	chartDir  = "job-signal-webhook"
	release   = "job-signal-webhook"
	namespace = "job-signal-system"
	// plainValues renders manifests/webhook/webhook.yaml and cert-manager.yaml.
	plainValues = "ci/kustomize-values.yaml"
	// kubeVersion is the Kubernetes the chart is rendered and linted for:
	// the newest make e2e pins (TestKubeVersion).
	kubeVersion = "v1.37.0"
)

// plainHeader starts each file of manifests/webhook that the chart renders.
const plainHeader = `# %s, for kubectl apply -k manifests/webhook
# (README.md there): the chart charts/job-signal-webhook rendered with its
# ci/kustomize-values.yaml (certificates from cert-manager, namespaces
# enabled by label). Do not edit: change the chart, then run
#   go test ./charts -update
`

// plainFiles splits the chart's plain rendering into the files of
// manifests/webhook: the cert-manager objects apart, so that webhook.yaml
// holds only kinds every Kubernetes client knows.
func plainFiles(out string) map[string]string {
	files := map[string][]string{}
	for _, doc := range strings.Split(strings.TrimPrefix(out, "---\n"), "\n---\n") {
		file := "../manifests/webhook/webhook.yaml"
		if strings.HasPrefix(doc, "# Source: "+chartDir+"/templates/certificate.yaml\n") {
			file = "../manifests/webhook/cert-manager.yaml"
		}
		files[file] = append(files[file], strings.TrimSuffix(doc, "\n"))
	}
	what := map[string]string{
		"../manifests/webhook/webhook.yaml":      "job-signal-webhook (cert-manager.yaml: its certificate)",
		"../manifests/webhook/cert-manager.yaml": "The serving certificate of webhook.yaml, from cert-manager",
	}
	out2 := map[string]string{}
	for file, docs := range files {
		out2[file] = fmt.Sprintf(plainHeader, what[file]) + strings.Join(docs, "\n---\n") + "\n"
	}
	return out2
}

// options are helm's flags for the chart as installed by `helm install
// job-signal-webhook -n job-signal-system`, with a values file of the
// chart (none: "") and --set pairs.
func options(values string, set ...string) chartrender.Options {
	o := chartrender.Options{Release: release, Namespace: namespace, Set: set, KubeVersion: kubeVersion}
	if values != "" {
		o.Values = []string{filepath.Join(chartDir, values)}
	}
	return o
}

// render is helm template of the chart with a values file (and --set
// pairs), as installed by `helm install job-signal-webhook -n job-signal-system`.
func render(t *testing.T, values string, set ...string) (string, error) {
	t.Helper()
	if len(set) == 0 {
		renders.Lock()
		r, ok := renders.m[values]
		renders.Unlock()
		if ok {
			return r.out, r.err
		}
	}
	out, err := renderNow(t, values, set...)
	if len(set) == 0 {
		renders.Lock()
		renders.m[values] = rendered{out, err}
		renders.Unlock()
	}
	return out, err
}

// renders keeps each value set's rendering for the other tests of the
// run: helm template is the slow part, and its output for the same input
// is the same (TestRenderedTwice).
var renders = struct {
	sync.Mutex
	m map[string]rendered
}{m: map[string]rendered{}}

type rendered struct {
	out string
	err error
}

func renderNow(t *testing.T, values string, set ...string) (string, error) {
	t.Helper()
	return chartrender.Template(chartDir, options(values, set...))
}

// valueSets are the chart's ci/*-values.yaml files.
func valueSets(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(chartDir, "ci", "*-values.yaml"))
	if err != nil || len(files) < 4 {
		t.Fatalf("value sets in %s/ci: %v %v", chartDir, files, err)
	}
	var out []string
	for _, f := range files {
		out = append(out, filepath.Join("ci", filepath.Base(f)))
	}
	return out
}

// TestLint: helm lint --strict with each value set.
func TestLint(t *testing.T) {
	for _, values := range valueSets(t) {
		if err := chartrender.Lint(chartDir, options(values)); err != nil {
			t.Errorf("%s: %v", values, err)
		}
	}
}

// TestKubeVersion: the chart's tests render for the newest Kubernetes
// that make e2e pins (a module per version under e2e/kubernetes).
func TestKubeVersion(t *testing.T) {
	dirs, err := filepath.Glob("../e2e/kubernetes/v1.*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no pinned Kubernetes under ../e2e/kubernetes: %v", err)
	}
	minor := func(dir string) int {
		var m int
		fmt.Sscanf(filepath.Base(dir), "v1.%d", &m)
		return m
	}
	sort.Slice(dirs, func(i, j int) bool { return minor(dirs[i]) < minor(dirs[j]) })
	if newest := filepath.Base(dirs[len(dirs)-1]); !strings.HasPrefix(kubeVersion, newest+".") {
		t.Errorf("the chart is rendered for Kubernetes %s, the newest pinned is %s: change kubeVersion", kubeVersion, newest)
	}
}

// TestGoldens: helm template's output for each value set is its golden
// file; the kustomize value set's are manifests/webhook/webhook.yaml and
// cert-manager.yaml.
func TestGoldens(t *testing.T) {
	for _, values := range valueSets(t) {
		out, err := render(t, values)
		if err != nil {
			t.Errorf("%s: %v", values, err)
			continue
		}
		if values == plainValues {
			files := plainFiles(out)
			if len(files) != 2 {
				t.Errorf("%s: rendered into %d files, want webhook.yaml and cert-manager.yaml", values, len(files))
			}
			for file, text := range files {
				compareGolden(t, file, text)
			}
			continue
		}
		golden := filepath.Join("testdata", strings.TrimSuffix(filepath.Base(values), "-values.yaml")+".yaml")
		compareGolden(t, golden, out)
	}
}

func compareGolden(t *testing.T, golden, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./charts -update writes it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from what the chart renders now: review and run go test ./charts -update\n%s", golden, lineDiff(string(want), got))
	}
}

// lineDiff shows the first lines that differ, enough to see what changed.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\n  golden: %q\n  now:    %q", i+1, wl, gl)
		}
	}
	return ""
}

// TestChartVersion: the chart releases with the project, and installs the
// webhook's released image (internal/version).
func TestChartVersion(t *testing.T) {
	var chart struct {
		Version    string `json:"version"`
		AppVersion string `json:"appVersion"`
	}
	var values struct {
		Image struct {
			Repository string `json:"repository"`
			Tag        string `json:"tag"`
		} `json:"image"`
	}
	for file, into := range map[string]any{"Chart.yaml": &chart, "values.yaml": &values} {
		data, err := os.ReadFile(filepath.Join(chartDir, file))
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(data, into); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	if chart.AppVersion != version.Release || "v"+chart.Version != version.Release {
		t.Errorf("Chart.yaml: version %s, appVersion %s; want %s (internal/version.Release), without and with its v", chart.Version, chart.AppVersion, version.Release)
	}
	if image := values.Image.Repository + ":" + chart.AppVersion; values.Image.Tag != "" || image != version.WebhookImage {
		t.Errorf("values.yaml installs %s (tag %q), want %s", image, values.Image.Tag, version.WebhookImage)
	}
}
