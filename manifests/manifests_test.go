// Package manifests holds no code: only the example manifests and these
// tests of them. They read the YAML, and build the kustomize example, with
// e2etool, the e2e suite's tool (e2e/kubelet/e2etool: sigs.k8s.io/yaml and
// sigs.k8s.io/kustomize/api), built here with the flags the suite uses so
// that either build is a cache hit for the other. That keeps YAML and
// kustomize, and their dependencies, out of the main module's go.mod.
package manifests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"
)

var e2etool string // the built tool's path, set by TestMain

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "manifests-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	e2etool = filepath.Join(dir, "e2etool")
	start := time.Now()
	cmd := exec.Command("go", "build", "-C", filepath.Join("..", "e2e", "kubelet"), "-trimpath", "-o", e2etool, "./e2etool")
	cmd.Env = append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building e2etool (YAML and kustomize for these tests): %v\n%s", err, out)
		return 1
	}
	if d := time.Since(start); d > 10*time.Second {
		fmt.Fprintf(os.Stderr, "building e2etool took %.0fs (once; then cached)\n", d.Seconds())
	}
	return m.Run()
}

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
		docs, err := tool(text, "yaml2json")
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
	for _, dir := range kustomizations {
		docs, err := tool(nil, "kustomize", dir)
		if err != nil {
			return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
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

// tool runs e2etool and decodes the JSON array it prints.
func tool(stdin []byte, args ...string) ([]map[string]any, error) {
	cmd := exec.Command(e2etool, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%v: %s", err, stderr.Bytes())
	}
	var docs []map[string]any
	if err := json.Unmarshal(out, &docs); err != nil {
		return nil, fmt.Errorf("e2etool %v printed no JSON array: %w", args, err)
	}
	return docs, nil
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
	if pods < 7 {
		t.Errorf("found %d Pods in manifests/, want at least 7 (6 examples and the kustomize one)", pods)
	}
}
