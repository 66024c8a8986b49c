// Package manifests holds no code: only the example manifests and these
// tests of them. YAML is read with sigs.k8s.io/yaml. The kustomize example
// is built with `kubectl kustomize` when $KUBECTL names a kubectl (make e2e
// builds one); without it only the files are checked here, and make e2e
// applies the built example in a namespace that enforces Pod Security
// "restricted", so the API server itself judges it.
package manifests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"sigs.k8s.io/yaml"
)

// source is one file of manifests/, or the kustomize example as built.
type source struct {
	name string           // path below manifests/, or "kustomize build DIR"
	text []byte           // the YAML as written, or the built output as JSON
	docs []map[string]any // its documents, decoded
}

var (
	sourcesOnce sync.Once
	sourcesList []source
	sourcesErr  error
)

// sources returns every YAML file below manifests/ and the output of
// kustomize build for every kustomization (not components) below it; read
// once for all the tests.
func sources(t *testing.T) []source {
	t.Helper()
	sourcesOnce.Do(func() { sourcesList, sourcesErr = readSources() })
	if sourcesErr != nil {
		t.Fatal(sourcesErr)
	}
	return sourcesList
}

func readSources() ([]source, error) {
	var out []source
	var kustomizations []string
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".yaml" {
			return err
		}
		text, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		docs, err := decodeYAML(text)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, source{name: path, text: text, docs: docs})
		if d.Name() == "kustomization.yaml" && len(docs) == 1 && docs[0]["kind"] != "Component" {
			kustomizations = append(kustomizations, filepath.Dir(path))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	kubectl := os.Getenv("KUBECTL")
	for _, dir := range kustomizations {
		if kubectl == "" {
			continue // see the package doc
		}
		built, err := exec.Command(kubectl, "kustomize", dir).Output()
		if err != nil {
			return nil, fmt.Errorf("kubectl kustomize %s: %w", dir, err)
		}
		docs, err := decodeYAML(built)
		if err != nil {
			return nil, fmt.Errorf("kubectl kustomize %s: %w", dir, err)
		}
		text, err := json.Marshal(docs)
		if err != nil {
			return nil, err
		}
		out = append(out, source{name: "kustomize build " + dir, text: text, docs: docs})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// decodeYAML decodes every document of a YAML stream as JSON objects,
// split as the API machinery (and the e2e suite) splits them.
func decodeYAML(text []byte) ([]map[string]any, error) {
	var docs []map[string]any
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(text)))
	for i := 1; ; i++ {
		part, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(bytes.TrimSpace(part)) == 0 {
			continue
		}
		var doc map[string]any
		if err := yaml.Unmarshal(part, &doc); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if doc != nil {
			docs = append(docs, doc)
		}
	}
}

// podTemplate is the Pod a workload creates.
type podTemplate struct {
	where      string // file and workload
	meta, spec map[string]any
}

// podTemplates returns the Pod of every workload in docs; a Kustomization,
// a Component or a kind without Pods has none.
func podTemplates(src source) []podTemplate {
	var out []podTemplate
	for _, doc := range src.docs {
		var tmpl map[string]any
		switch doc["kind"] {
		case "Pod":
			tmpl = doc
		case "Job", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet":
			tmpl = object(object(doc, "spec"), "template")
		case "CronJob":
			tmpl = object(object(object(object(doc, "spec"), "jobTemplate"), "spec"), "template")
		default:
			continue
		}
		where := fmt.Sprintf("%s: %v %v", src.name, doc["kind"], object(doc, "metadata")["name"])
		out = append(out, podTemplate{where: where, meta: object(tmpl, "metadata"), spec: object(tmpl, "spec")})
	}
	return out
}

// TestRestricted: every Pod of every example, and of the kustomize example
// as kustomize builds it, meets the Pod Security Standards' restricted
// profile, so the examples run in a namespace that enforces it.
func TestRestricted(t *testing.T) {
	pods := 0
	for _, src := range sources(t) {
		for _, pod := range podTemplates(src) {
			pods++
			for _, v := range restrictedViolations(pod.meta, pod.spec) {
				t.Errorf("%s: %s", pod.where, v)
			}
			for _, c := range podContainers(pod.spec) {
				if r := object(c.fields, "resources"); len(object(r, "requests")) == 0 || len(object(r, "limits")) == 0 {
					t.Errorf("%s: container %q: state resources requests and limits, as every example does", pod.where, c.name)
				}
			}
		}
	}
	want := 6 // the examples; the kustomize one too when it is built
	if os.Getenv("KUBECTL") != "" {
		want = 7
	}
	if pods < want {
		t.Errorf("found %d Pods in manifests/, want at least %d", pods, want)
	}
}
