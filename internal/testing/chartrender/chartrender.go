// Package chartrender renders and lints the project's Helm chart, and
// builds kustomize directories, in the test process with Helm's and
// kustomize's own packages: what `helm template`, `helm lint --strict`
// and `kustomize build` (`kubectl kustomize`) do for a local chart or
// folder, without building either program.
//
// Helm's packages are those of helm.sh/helm/v3 at the version go.mod
// requires: the newest Helm 3 on the Kubernetes libraries the project
// uses, so that they share one build with the rest of the tests. Only the
// client-side paths are here: no cluster, no repositories, no chart
// dependencies (a chart that declares any is refused).
package chartrender

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
	"helm.sh/helm/v3/pkg/strvals"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// Options are the flags of helm template and helm lint that the tests use.
type Options struct {
	Release   string   // the release's name (helm template's NAME)
	Namespace string   // --namespace
	Values    []string // --values files, in order
	Set       []string // --set pairs, in order, after the files
	// KubeVersion is --kube-version: the Kubernetes version the chart is
	// rendered and linted for (.Capabilities.KubeVersion, the chart's
	// kubeVersion range, the deprecated-API rule). Required: helm's own
	// default is stamped into its binary at build time.
	KubeVersion string
}

// values merges the files and --set pairs as helm's command line does
// (pkg/cli/values): each file over the ones before, each map merged key
// by key, then every --set pair parsed into the result.
func (o Options) values() (map[string]any, error) {
	base := map[string]any{}
	for _, file := range o.Values {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("--values %s: %w", file, err)
		}
		current := map[string]any{}
		if err := yaml.Unmarshal(data, &current); err != nil {
			return nil, fmt.Errorf("--values %s: %w", file, err)
		}
		base = mergeMaps(base, current)
	}
	for _, s := range o.Set {
		if err := strvals.ParseInto(s, base); err != nil {
			return nil, fmt.Errorf("--set %s: %w", s, err)
		}
	}
	return base, nil
}

// mergeMaps returns a with b over it: a map in b merges into a map in a
// under the same key; anything else in b replaces what a has.
func mergeMaps(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if bm, ok := v.(map[string]any); ok {
			if am, ok := out[k].(map[string]any); ok {
				out[k] = mergeMaps(am, bm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

func (o Options) kubeVersion() (*chartutil.KubeVersion, error) {
	if o.KubeVersion == "" {
		return nil, errors.New("chartrender: no KubeVersion given")
	}
	kv, err := chartutil.ParseKubeVersion(o.KubeVersion)
	if err != nil {
		return nil, fmt.Errorf("chartrender: KubeVersion %q: %w", o.KubeVersion, err)
	}
	return kv, nil
}

// Template is what `helm template RELEASE DIR --namespace NS --values ...
// --set ... --kube-version V` prints for the chart in the folder dir: its
// manifests in Helm's install order, each after "---" and a "# Source:"
// line, then its hooks; NOTES.txt left out.
func Template(dir string, o Options) (string, error) {
	kv, err := o.kubeVersion()
	if err != nil {
		return "", err
	}
	vals, err := o.values()
	if err != nil {
		return "", err
	}
	ch, err := loader.Load(dir)
	if err != nil {
		return "", err
	}
	if t := ch.Metadata.Type; t != "" && t != "application" {
		return "", fmt.Errorf("%s charts are not installable", t)
	}
	if len(ch.Metadata.Dependencies) > 0 {
		return "", fmt.Errorf("chart %s has dependencies: chartrender does not resolve them (use helm)", ch.Name())
	}
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = *kv
	if err := chartutil.ProcessDependenciesWithMerge(ch, vals); err != nil {
		return "", err
	}
	top, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{
		Name: o.Release, Namespace: o.Namespace, Revision: 1, IsInstall: true,
	}, caps)
	if err != nil {
		return "", err
	}
	if r := ch.Metadata.KubeVersion; r != "" && !chartutil.IsCompatibleRange(r, caps.KubeVersion.String()) {
		return "", fmt.Errorf("chart requires kubeVersion: %s which is incompatible with Kubernetes %s", r, caps.KubeVersion.String())
	}
	var e engine.Engine
	files, err := e.Render(ch, top)
	if err != nil {
		return "", err
	}
	for name := range files {
		if strings.HasSuffix(name, "NOTES.txt") {
			delete(files, name)
		}
	}
	hooks, manifests, err := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder)
	if err != nil {
		return "", err
	}
	return format(manifests, hooks), nil
}

// format lays the rendered files out as helm template prints them: the
// release's manifest trimmed, then each hook.
func format(manifests []releaseutil.Manifest, hooks []*release.Hook) string {
	var manifest strings.Builder
	for _, m := range manifests {
		fmt.Fprintf(&manifest, "---\n# Source: %s\n%s\n", m.Name, m.Content)
	}
	var out strings.Builder
	out.WriteString(strings.TrimSpace(manifest.String()) + "\n")
	for _, h := range hooks {
		fmt.Fprintf(&out, "---\n# Source: %s\n%s\n", h.Path, h.Manifest)
	}
	return out.String()
}

// Lint is `helm lint --strict DIR --namespace NS --values ... --set ...
// --kube-version V`: an error listing every warning and error, nil when
// only informational messages remain.
func Lint(dir string, o Options) error {
	kv, err := o.kubeVersion()
	if err != nil {
		return err
	}
	vals, err := o.values()
	if err != nil {
		return err
	}
	if _, err := os.Stat(dir + "/Chart.yaml"); err != nil {
		return fmt.Errorf("unable to check Chart.yaml file in chart: %w", err)
	}
	linter := lint.AllWithKubeVersion(dir, vals, o.Namespace, kv)
	var failed []string
	for _, m := range linter.Messages {
		if m.Severity >= support.WarningSev {
			failed = append(failed, m.Error())
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("helm lint --strict %s: %s", dir, strings.Join(failed, "\n"))
	}
	return nil
}

// Kustomize is `kustomize build DIR`, as kubectl apply -k builds it.
func Kustomize(dir string) (string, error) {
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	res, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return "", fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	out, err := res.AsYaml()
	if err != nil {
		return "", fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	return string(out), nil
}
