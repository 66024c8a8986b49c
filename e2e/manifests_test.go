//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
)

// TestManifests applies every Job and CronJob of manifests/, and the
// kustomize example as `kubectl kustomize` builds it, through the API, each
// in its own namespace. Only the image names (to the local stand-ins) and
// the pull policy change, and a CronJob's schedule becomes every minute so
// that it fires during the test. Each Job must reach Complete with one Pod,
// Succeeded, every container's exit code and the product's termination
// messages as promised, plus per-example checks.
func TestManifests(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(filepath.Dir(mustGetwd()), "manifests")
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
	obj  runtime.Object // a *batchv1.Job or *batchv1.CronJob
}

// manifestExamples reads every YAML file directly in dir, and builds every
// folder below it that holds a Kustomization. Components are not
// standalone: they are run through the Kustomization that uses them;
// a Kustomization that installs the webhook is not an example.
func manifestExamples(t *testing.T, dir string) []example {
	t.Helper()
	var out []example
	add := func(source string, text []byte) {
		n := 0
		for _, obj := range decodeAll(t, source, text) {
			switch o := obj.(type) {
			case *batchv1.Job:
				out = append(out, example{name: source + "/" + o.Name, obj: o})
				n++
			case *batchv1.CronJob:
				out = append(out, example{name: source + "/" + o.Name, obj: o})
				n++
			}
		}
		if n == 0 {
			t.Errorf("%s holds no Job or CronJob to run", source)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	sort.Strings(files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		add(filepath.Base(f), b)
	}
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "kustomization.yaml" {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte("\nkind: Component")) {
			return nil
		}
		kdir := filepath.Dir(path)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		built, err := kube.Kubectl(ctx, "", "kustomize", kdir)
		if err != nil {
			t.Errorf("kubectl kustomize %s: %v", kdir, err)
			return nil
		}
		rel, _ := filepath.Rel(dir, kdir)
		if strings.Contains(built, "\nkind: MutatingWebhookConfiguration\n") {
			// An install (the webhook, cert-manager's kinds): the webhook
			// tests install it from its chart.
			t.Logf("%s installs the webhook: not a workload example", rel)
			return nil
		}
		add(rel, []byte(built))
		return nil
	})
	return out
}

// decodeAll decodes every document of a multi-document YAML text into
// typed objects, as kubectl would.
func decodeAll(t *testing.T, source string, text []byte) []runtime.Object {
	t.Helper()
	var out []runtime.Object
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(text)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", source, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", source, err)
		}
		out = append(out, obj)
	}
}

// localize points every container of a Pod template at the local image
// of the same program (localImage), never pulled. Nothing else changes.
func localize(t *testing.T, spec *corev1.PodSpec) {
	t.Helper()
	for _, list := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range list {
			img, err := localImage(list[i].Image)
			if err != nil {
				t.Fatal(err)
			}
			list[i].Image, list[i].ImagePullPolicy = img, kube.PullPolicy()
		}
	}
}

// exampleExits are the exit codes that are not 0, by example and container.
var exampleExits = map[string]map[string]int32{
	// As PID 1, tail ignores the kubelet's SIGTERM and is killed after the
	// grace period: the native-sidecar caveat the manifest documents.
	"job-native-sidecars.yaml/nightly-export-native": {"log-shipper": 137},
}

// exampleChecks are what each example shows beyond success.
var exampleChecks = map[string]func(t *testing.T, s *space, pod string){
	"job-ordered-sidecars.yaml/sync-inventory": checkOrderedSidecars,
	"job-istio.yaml/db-migrate-mesh": func(t *testing.T, s *space, pod string) {
		expectLog(t, s, pod, "istio-proxy", "quitquitquit: exiting 0") // stopped by --quit-url
	},
	// The real Cloud SQL Auth Proxy: offline it accepts the migration's
	// connection, then closes it (the instance's details cannot be fetched).
	"job-cloud-sql-proxy.yaml/db-migrate": func(t *testing.T, s *space, pod string) {
		expectLog(t, s, pod, "migrate", "migrations applied")
		expectLog(t, s, pod, "cloud-sql-proxy", "Accepted connection from 127.0.0.1")
		expectLog(t, s, pod, "cloud-sql-proxy", "/quitquitquit received request")
		expectQuitByURL(t, s, pod, "cloud-sql-proxy")
	},
	"job-classic-sidecar.yaml/nightly-export": func(t *testing.T, s *space, pod string) {
		expectLog(t, s, pod, "log-shipper", "export started")
	},
}

func runExample(t *testing.T, ex example) {
	var spec *corev1.PodSpec
	switch o := ex.obj.(type) {
	case *batchv1.Job:
		spec = &o.Spec.Template.Spec
	case *batchv1.CronJob:
		spec = &o.Spec.JobTemplate.Spec.Template.Spec
	}
	if usesNativeSidecars(spec) {
		requireNativeSidecars(t)
	}
	// The API server's PodSecurity admission enforces the restricted
	// profile (as this cluster's version defines it) here: every example,
	// the kustomize one as built, must meet it.
	s := newSpace(t, "manifest", map[string]string{"pod-security.kubernetes.io/enforce": "restricted",
		"pod-security.kubernetes.io/enforce-version": fmt.Sprintf("v1.%d", kube.Version().Minor())})
	var job *batchv1.Job
	switch o := ex.obj.DeepCopyObject().(type) {
	case *batchv1.Job:
		localize(t, &o.Spec.Template.Spec)
		job, _ = s.createJob(o)
	case *batchv1.CronJob:
		job = runCronJob(t, s, o)
	}
	done, _ := s.waitJob(job.Name, 4*time.Minute)
	expectJob(t, done, batchv1.JobComplete, batchv1.JobReasonCompletionsReached, 1, 0)
	pods := s.jobPods(done, 1)
	expectPhase(t, pods[0], corev1.PodSucceeded)
	expectExits(t, pods[0], exampleExits[ex.name])
	t.Logf("%s: %s", ex.name, podSummary(pods[0]))
	if check := exampleChecks[ex.name]; check != nil {
		check(t, s, pods[0].Name)
	}
}

// runCronJob creates the CronJob with a schedule of every minute and
// returns the first Job its controller creates; then suspends it, so no
// second Job starts while the first is checked.
func runCronJob(t *testing.T, s *space, cj *batchv1.CronJob) *batchv1.Job {
	localize(t, &cj.Spec.JobTemplate.Spec.Template.Spec)
	t.Logf("CronJob %s: schedule %q changed to every minute", cj.Name, cj.Spec.Schedule)
	cj.Spec.Schedule = "* * * * *"
	created, err := kube.Client().BatchV1().CronJobs(s.ns).Create(s.ctx, cj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create CronJob: %v", err)
	}
	var job *batchv1.Job
	err = s.jobs.waitFor(3*time.Minute, func(all []observation[*batchv1.Job]) (bool, string) {
		for _, o := range all {
			if metav1.IsControlledBy(o.obj, created) {
				job = o.obj
				return true, ""
			}
		}
		return false, "the CronJob has created no Job"
	})
	if err != nil {
		t.Fatal(err)
	}
	patch := []byte(`{"spec":{"suspend":true}}`)
	if _, err := kube.Client().BatchV1().CronJobs(s.ns).Patch(s.ctx, cj.Name, "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("suspend CronJob: %v", err)
	}
	return job
}

// checkOrderedSidecars: the proxy is ready before the agents start, all
// three are ready before the main command starts, and the proxy is
// signalled to stop only after both agents have stopped.
func checkOrderedSidecars(t *testing.T, s *space, pod string) {
	proxy := s.logs(pod, "proxy")
	proxyReady := eventTime(t, "proxy", proxy, msgSidecarReady)
	proxyStopping := eventTime(t, "proxy", proxy, msgSentStopSignal, msgAskedToQuit)
	sync := s.logs(pod, "sync")
	mainStarted := eventTime(t, "sync", sync, msgCommandStarted)
	for _, agent := range []string{"config-agent", "metrics-agent"} {
		log := s.logs(pod, agent)
		started := eventTime(t, agent, log, msgSidecarStarted)
		ready := eventTime(t, agent, log, msgSidecarReady)
		stopped := eventTime(t, agent, log, msgSidecarStopped, msgSidecarKilled)
		if started.Before(proxyReady) {
			t.Errorf("%s started at %s, before the proxy was ready at %s", agent, started.Format(time.StampMilli), proxyReady.Format(time.StampMilli))
		}
		if mainStarted.Before(ready) {
			t.Errorf("the main command started at %s, before %s was ready at %s", mainStarted.Format(time.StampMilli), agent, ready.Format(time.StampMilli))
		}
		if proxyStopping.Before(stopped) {
			t.Errorf("the proxy was told to stop at %s, before %s had stopped at %s", proxyStopping.Format(time.StampMilli), agent, stopped.Format(time.StampMilli))
		}
	}
	if mainStarted.Before(proxyReady) {
		t.Errorf("the main command started before the proxy was ready")
	}
	expectLog(t, s, pod, "sync", "config: region=eu-west")
}
