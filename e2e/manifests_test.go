//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestManifests runs every example of manifests/ as a static Pod: each
// Job's or CronJob's Pod template, with only the image names (to the local
// stand-ins) and the pull policy changed, and the kustomize example as
// kustomize builds it. Each must succeed with the exit codes and
// termination messages the product promises, plus per-example checks.
func TestManifests(t *testing.T) {
	needProduct(t)
	dir := filepath.Join(env.repo, "manifests")
	examples := manifestExamples(t, dir)
	if len(examples) == 0 {
		t.Fatal("manifests/ holds no example")
	}
	for _, ex := range examples {
		t.Run(ex.name, func(t *testing.T) {
			t.Parallel()
			runExample(t, ex)
		})
	}
}

// example is one workload of manifests/.
type example struct {
	name string         // file (or kustomization folder) and workload name
	doc  map[string]any // the Job, CronJob or Pod
}

// manifestExamples reads every YAML file directly in dir, and builds every
// folder below it that holds a Kustomization. Components are not
// standalone: they are run through the Kustomization that uses them.
func manifestExamples(t *testing.T, dir string) []example {
	t.Helper()
	var out []example
	add := func(source string, docs []map[string]any) {
		n := 0
		for _, doc := range docs {
			switch doc["kind"] {
			case "Job", "CronJob", "Pod":
				meta, _ := doc["metadata"].(map[string]any)
				out = append(out, example{name: fmt.Sprintf("%s/%v", source, meta["name"]), doc: doc})
				n++
			}
		}
		if n == 0 {
			t.Errorf("%s holds no Job, CronJob or Pod to run", source)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		add(filepath.Base(f), yamlDocs(t, string(b)))
	}
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "kustomization.yaml" {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if k := yamlDocs(t, string(b)); len(k) == 1 && k[0]["kind"] == "Component" {
			return nil
		}
		kdir := filepath.Dir(path)
		out2, err := e2etool("", "kustomize", kdir)
		if err != nil {
			t.Errorf("kustomize build %s: %v", kdir, err)
			return nil
		}
		var docs []map[string]any
		if err := json.Unmarshal(out2, &docs); err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, kdir)
		add(rel, docs)
		return nil
	})
	return out
}

// podFromWorkload extracts the Pod a Job or CronJob would create, adapted
// to this machine: local images, never pulled. Nothing else changes.
func podFromWorkload(t *testing.T, doc map[string]any) map[string]any {
	t.Helper()
	get := func(m map[string]any, keys ...string) map[string]any {
		for _, k := range keys {
			next, ok := m[k].(map[string]any)
			if !ok {
				t.Fatalf("%v has no %s", doc["kind"], strings.Join(keys, "."))
			}
			m = next
		}
		return m
	}
	var template map[string]any
	switch doc["kind"] {
	case "Pod":
		template = doc
	case "Job":
		template = get(doc, "spec", "template")
	case "CronJob":
		template = get(doc, "spec", "jobTemplate", "spec", "template")
	}
	meta, _ := template["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta["name"] = get(doc, "metadata")["name"]
	spec := get(template, "spec")
	for _, key := range []string{"initContainers", "containers"} {
		list, _ := spec[key].([]any)
		for _, c := range list {
			c := c.(map[string]any)
			img, err := localImage(fmt.Sprint(c["image"]))
			if err != nil {
				t.Fatal(err)
			}
			c["image"], c["imagePullPolicy"] = img, "Never"
		}
	}
	return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
}

// exampleExits are the exit codes that are not 0, by example and container.
var exampleExits = map[string]map[string]int{
	// As PID 1, tail ignores the kubelet's SIGTERM and is killed after the
	// grace period: the native-sidecar caveat the manifest documents.
	"job-native-sidecars.yaml/nightly-export-native": {"log-shipper": 137},
}

// exampleChecks are what each example shows beyond success.
var exampleChecks = map[string]func(t *testing.T, sp *staticPod){
	"job-ordered-sidecars.yaml/sync-inventory": checkOrderedSidecars,
	"job-istio.yaml/db-migrate-mesh": func(t *testing.T, sp *staticPod) {
		expectLog(t, sp, "istio-proxy", "quitquitquit: exiting 0") // stopped by --quit-url
	},
	"job-cloud-sql-proxy.yaml/db-migrate": func(t *testing.T, sp *staticPod) {
		expectLog(t, sp, "migrate", "migrations applied")
		expectLog(t, sp, "cloud-sql-proxy", "client connected")
		expectLog(t, sp, "cloud-sql-proxy", "quitquitquit: exiting 0")
	},
	"job-classic-sidecar.yaml/nightly-export": func(t *testing.T, sp *staticPod) {
		expectLog(t, sp, "log-shipper", "export started")
	},
}

func runExample(t *testing.T, ex example) {
	spec := podFromWorkload(t, ex.doc)
	sp := runPod(t, spec)
	start := time.Now()
	p, seen := sp.waitTerminal(3 * time.Minute)
	if p.Status.Phase != "Succeeded" {
		t.Fatalf("want Succeeded, got %s", p.summary())
	}
	// Every container: its exit code, and the termination message our
	// binaries write.
	podSpec := spec["spec"].(map[string]any)
	jobContainer := ""
	for _, key := range []string{"initContainers", "containers"} {
		list, _ := podSpec[key].([]any)
		for _, c := range list {
			c := c.(map[string]any)
			name := c["name"].(string)
			want := exampleExits[ex.name][name]
			term := expectExit(t, p, name, want)
			command, _ := c["command"].([]any)
			switch {
			case len(command) > 0 && command[0] == jobSignalPath:
				jobContainer = name
				if w := fmt.Sprintf("exit code %d", want); !strings.Contains(term.Message, w) {
					t.Errorf("container %s: termination message %q does not say %q", name, term.Message, w)
				}
			case len(command) > 0 && command[0] == sidecarWatchPath:
				if w := "sidecar-watch: " + name + " stopped"; !strings.Contains(term.Message, w) {
					t.Errorf("container %s: termination message %q does not say %q", name, term.Message, w)
				}
			}
		}
	}
	t.Logf("%s: %s", ex.name, p.summary())
	if jobContainer != "" {
		logExitToPhase(t, sp, p, seen, "manifest:"+ex.name, jobContainer)
	} else {
		t.Logf("E2E_TIMING variant=manifest:%s pod_start_to_%s_ms=%d", ex.name, p.Status.Phase, seen.Sub(start).Milliseconds())
	}
	if check := exampleChecks[ex.name]; check != nil {
		check(t, sp)
	}
}

func expectLog(t *testing.T, sp *staticPod, container, text string) {
	t.Helper()
	if log := sp.logText(container); !strings.Contains(log, text) {
		t.Errorf("container %s did not log %q; its log:\n%s", container, text, log)
	}
}

// checkOrderedSidecars: the proxy is ready before the agents start, all
// three are ready before the job's command starts, and the proxy is signalled
// to stop only after both agents have stopped.
func checkOrderedSidecars(t *testing.T, sp *staticPod) {
	proxyReady := sp.eventTime(t, "proxy", msgSidecarReady)
	jobStarted := sp.eventTime(t, "sync", msgCommandStarted)
	proxyStopping := sp.eventTime(t, "proxy", msgSentStopSignal, msgAskedToQuit)
	for _, agent := range []string{"config-agent", "metrics-agent"} {
		started := sp.eventTime(t, agent, msgSidecarStarted)
		ready := sp.eventTime(t, agent, msgSidecarReady)
		stopped := sp.eventTime(t, agent, msgSidecarStopped, msgSidecarKilled)
		if started.Before(proxyReady) {
			t.Errorf("%s started at %s, before the proxy was ready at %s", agent, started.Format(time.StampMilli), proxyReady.Format(time.StampMilli))
		}
		if jobStarted.Before(ready) {
			t.Errorf("the job started at %s, before %s was ready at %s", jobStarted.Format(time.StampMilli), agent, ready.Format(time.StampMilli))
		}
		if proxyStopping.Before(stopped) {
			t.Errorf("the proxy was told to stop at %s, before %s had stopped at %s", proxyStopping.Format(time.StampMilli), agent, stopped.Format(time.StampMilli))
		}
	}
	if jobStarted.Before(proxyReady) {
		t.Errorf("the job started before the proxy was ready")
	}
	expectLog(t, sp, "sync", "config: region=eu-west")
}
