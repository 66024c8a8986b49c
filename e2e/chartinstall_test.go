//go:build e2e

// long because the chart's install, its reading (the webhook's logs and
// metrics through the API) and its operation (scale, upgrade, uninstall)
// are one piece: what an operator does with the release.

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/tools/helmtool"
)

// The webhook as an operator installs it: `helm install` of the chart
// into the cluster, as the README says (a namespace of its own, created
// first and labelled to enforce the restricted Pod Security Standard),
// with its own Deployment, Service, certificate (the webhook's own, the
// chart's default) and hooks, the API server calling it at the Service's
// endpoints. Its image is the suite's build of webhook.Dockerfile's
// prebuilt target (webhookImage); on a cluster the suite attached to,
// delivered as every image of the suite is (E2E_REGISTRY or E2E_LOAD).
//
// Each test installs a release of its own, which serves only the
// namespaces it names (the chart's namespaces value; labelledNamespaces
// and labelledPods off), so that releases and the process webhooks of
// other tests running at the same time never reach each other's Pods.

// chartWebhook is one release of the chart.
type chartWebhook struct {
	t         *testing.T
	release   string
	namespace string // the release's, where the webhook runs
	name      string // its objects' (the chart's fullname)
	set       []string
	render    string // helm's --post-renderer, if any
	home      string // helm's own folders
	gone      bool   // uninstalled
}

// installChart runs helm install of the chart into a namespace of its own
// for the given namespaces, with the suite's images and more --set pairs
// (the chart's defaults otherwise, but logs in JSON at debug level), waits
// for the Deployment to be available and returns once the API server
// calls the webhook. It is uninstalled when the test ends.
func installChart(t *testing.T, namespaces []string, set ...string) *chartWebhook {
	t.Helper()
	return installChartRendered(t, namespaces, "", set...)
}

// installChartRendered is installChart with a post-renderer: an executable
// that helm runs on the rendered manifests (stdin) and applies what it
// prints, on install and on every upgrade (for what no value sets).
func installChartRendered(t *testing.T, namespaces []string, postRenderer string, set ...string) *chartWebhook {
	t.Helper()
	ctx := t.Context()
	ns, err := kube.CreateNamespace(ctx, "jsw", map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted",
		"pod-security.kubernetes.io/warn":    "restricted",
	})
	if err != nil {
		t.Fatal(err)
	}
	h := &chartWebhook{t: t, release: ns, namespace: ns, name: ns + "-job-signal-webhook", render: postRenderer, home: t.TempDir()}
	h.set = append(append(imageValues("image", webhookImage), "installImage="+productImage,
		"namespaces={"+strings.Join(namespaces, ",")+"}", "labelledNamespaces=false", "labelledPods=false",
		"logFormat=json", "logLevel=debug"), set...)
	t.Cleanup(func() {
		if t.Failed() {
			h.report()
		}
		if !h.gone {
			if _, err := h.helm(3*time.Minute, "uninstall", h.release, "--namespace", ns, "--wait", "--timeout", "2m"); err != nil {
				t.Errorf("helm uninstall: %v", err)
			}
		}
		cleanup, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		if err := kube.DeleteNamespace(cleanup, ns); err != nil {
			t.Errorf("cleaning up: %v", err)
		}
	})
	start := time.Now()
	if _, err := h.helm(4*time.Minute, h.renderArgs("install")...); err != nil {
		t.Fatalf("helm install: %v", err)
	}
	h.waitAvailable(time.Minute)
	t.Logf("helm install %s: available after %v", h.release, time.Since(start).Round(time.Millisecond))
	waitCalled(t, h.name, namespaces[0])
	return h
}

// imageValues are the chart's --set pairs for an image the suite built,
// under key (image: repository, tag or digest, pullPolicy): the name Pods
// give it here (kube.ImageRef) and the suite's pull policy.
func imageValues(key, ref string) []string {
	r, err := name.ParseReference(ref, name.WeakValidation)
	if err != nil {
		panic(fmt.Sprintf("image %s: %v", ref, err))
	}
	repo := r.Context().Name()
	if strings.HasPrefix(ref, "localhost/") {
		// As written: go-containerregistry reads a first part
		// "localhost" with no port as a path on Docker Hub, containerd
		// as the name of an image it holds.
		repo = strings.TrimSuffix(strings.TrimSuffix(ref, "@"+r.Identifier()), ":"+r.Identifier())
	}
	out := []string{key + ".repository=" + repo, key + ".pullPolicy=" + string(kube.PullPolicy())}
	if d, ok := r.(name.Digest); ok {
		return append(out, key+".digest="+d.DigestStr())
	}
	return append(out, key+".tag="+r.Identifier())
}

func chartPath() string {
	return filepath.Join(filepath.Dir(mustGetwd()), "charts", "job-signal-webhook")
}

// helm runs the helm the chart's tests build (tools/helmtool) against the
// cluster, with folders of its own (no repositories, nothing of the
// user's), and returns its output.
func (h *chartWebhook) helm(timeout time.Duration, args ...string) (string, error) {
	tools, err := helmtool.Build(filepath.Dir(mustGetwd()))
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, tools.Helm, args...)
	home := h.home
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home+"/cache", "HELM_CONFIG_HOME="+home+"/config",
		"HELM_DATA_HOME="+home+"/data", "KUBECONFIG="+kube.Kubeconfig())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("helm %s: %w\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String(), nil
}

// renderArgs are helm's arguments for install or upgrade of the release
// with its values, waiting for its objects to be ready.
func (h *chartWebhook) renderArgs(verb string) []string {
	args := []string{verb, h.release, chartPath(), "--namespace", h.namespace, "--wait", "--timeout", "3m"}
	for _, s := range h.set {
		args = append(args, "--set", s)
	}
	if h.render != "" {
		args = append(args, "--post-renderer", h.render)
	}
	return args
}

// upgrade runs helm upgrade with the install's values and more, and waits
// for the rollout.
func (h *chartWebhook) upgrade(set ...string) {
	h.t.Helper()
	h.set = append(h.set, set...)
	if _, err := h.helm(4*time.Minute, h.renderArgs("upgrade")...); err != nil {
		h.t.Fatalf("helm upgrade: %v", err)
	}
	h.waitAvailable(time.Minute)
}

// uninstall runs helm uninstall, as an operator does (its hooks run).
func (h *chartWebhook) uninstall() string {
	h.t.Helper()
	out, err := h.helm(4*time.Minute, "uninstall", h.release, "--namespace", h.namespace, "--wait", "--timeout", "3m")
	if err != nil {
		h.t.Fatalf("helm uninstall: %v", err)
	}
	h.gone = true
	return out
}

// deployment is the release's Deployment now.
func (h *chartWebhook) deployment() *appsv1.Deployment {
	h.t.Helper()
	d, err := kube.Client().AppsV1().Deployments(h.namespace).Get(h.t.Context(), h.name, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return d
}

// waitAvailable waits until every replica of the Deployment's current
// template is updated, ready and available, and no other is left.
func (h *chartWebhook) waitAvailable(timeout time.Duration) {
	h.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		d := h.deployment()
		s, want := d.Status, ptr.Deref(d.Spec.Replicas, 1)
		if s.ObservedGeneration >= d.Generation && s.UpdatedReplicas == want && s.ReadyReplicas == want &&
			s.AvailableReplicas == want && s.Replicas == want {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("Deployment %s/%s not available after %s: %+v", h.namespace, h.name, timeout, s)
		}
		time.Sleep(200 * time.Millisecond) // a Get per 200 ms, bounded: a watch is not worth it here
	}
}

// scale sets the Deployment's replicas and waits: for none, until every
// Pod of it is gone (the webhook is down, its registration stays); for
// more, until they are available.
func (h *chartWebhook) scale(replicas int32) {
	h.t.Helper()
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas)
	if _, err := kube.Client().AppsV1().Deployments(h.namespace).Patch(h.t.Context(), h.name, types.MergePatchType,
		[]byte(patch), metav1.PatchOptions{}); err != nil {
		h.t.Fatal(err)
	}
	if replicas > 0 {
		h.waitAvailable(2 * time.Minute)
		return
	}
	deadline := time.Now().Add(2 * time.Minute)
	for len(h.pods()) > 0 {
		if time.Now().After(deadline) {
			h.t.Fatalf("the webhook's Pods are not gone 2 minutes after scaling to 0")
		}
		time.Sleep(200 * time.Millisecond) // a List per 200 ms, bounded
	}
}

// pods are the webhook's Pods now, terminating ones included.
func (h *chartWebhook) pods() []corev1.Pod {
	h.t.Helper()
	list, err := kube.Client().CoreV1().Pods(h.namespace).List(h.t.Context(), metav1.ListOptions{LabelSelector: "app=" + h.name})
	if err != nil {
		h.t.Fatal(err)
	}
	return list.Items
}

// events are the log lines of the webhook's running Pods so far, read
// through the API (kubectl logs).
func (h *chartWebhook) events(t *testing.T) []webhookEvent {
	t.Helper()
	var out []webhookEvent
	for _, p := range h.pods() {
		b, err := kube.Client().CoreV1().Pods(h.namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: "webhook"}).DoRaw(t.Context())
		if err != nil {
			if apierrors.IsNotFound(err) || apierrors.IsBadRequest(err) { // gone, or not started yet
				continue
			}
			t.Fatalf("the logs of %s: %v", p.Name, err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var e webhookEvent
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				out = append(out, e)
			}
		}
	}
	return out
}

// waitEvent waits, up to timeout, for a log line that match accepts.
func (h *chartWebhook) waitEvent(t *testing.T, timeout time.Duration, match func(webhookEvent) bool) webhookEvent {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		for _, e := range h.events(t) {
			if match(e) {
				return e
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the webhook of release %s did not log the line awaited within %s", h.release, timeout)
		}
		time.Sleep(250 * time.Millisecond) // logs are read through the API: poll, bounded
	}
}

// metric is the sum over the webhook's ready Pods of the sample whose line
// starts with series, read from /metrics on the HTTPS port through the API
// server's proxy (the port the NetworkPolicy opens to everyone).
func (h *chartWebhook) metric(t *testing.T, series string) float64 {
	t.Helper()
	return h.metricSum(t, series+" ")
}

// metricSum is metric for every sample whose line starts with prefix: a
// name and its first labels (`NAME{form="pair",`), whatever the labels
// after them.
func (h *chartWebhook) metricSum(t *testing.T, prefix string) float64 {
	t.Helper()
	sum := 0.0
	for _, p := range h.pods() {
		if p.DeletionTimestamp != nil || !podReady(&p) {
			continue
		}
		b, err := kube.Client().CoreV1().RESTClient().Get().Namespace(h.namespace).Resource("pods").
			Name("https:" + p.Name + ":8443").SubResource("proxy").Suffix("metrics").DoRaw(t.Context())
		if err != nil {
			t.Fatalf("/metrics of %s: %v", p.Name, err)
		}
		sum += samplesOf(t, b, prefix)
	}
	return sum
}

// samplesOf is the sum of the samples of a /metrics page whose line
// starts with prefix, 0 when there is none.
func samplesOf(t *testing.T, page []byte, prefix string) float64 {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(page))
	sc.Buffer(nil, 1<<20)
	sum := 0.0
	for sc.Scan() {
		if !strings.HasPrefix(sc.Text(), prefix) {
			continue
		}
		line := sc.Text()
		v, err := strconv.ParseFloat(strings.TrimSpace(line[strings.LastIndexByte(line, ' ')+1:]), 64)
		if err != nil {
			t.Fatalf("/metrics: %s: %v", line, err)
		}
		sum += v
	}
	return sum
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// report logs what a person would look at when a test of the release
// failed: helm's status, the namespace's objects and events, every log.
func (h *chartWebhook) report() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	status, _ := h.helm(time.Minute, "status", h.release, "--namespace", h.namespace)
	h.t.Logf("release %s:\n%s\n%s", h.release, status, kube.Report(ctx, h.namespace))
}

// waitCalled returns once the API server calls the webhook of the
// configuration named config for namespace ns: it learns of
// configurations through a watch, and until it has, Pods are admitted
// without a call (failurePolicy does not apply). It probes with dry-run
// creations of a Pod that can need job-signal until one comes back
// injected.
func waitCalled(t *testing.T, config, ns string) {
	t.Helper()
	probe := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "webhook-probe", Labels: map[string]string{inject.LabelInject: "enabled"}},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{
			{Name: "main", Image: busyboxImage, ImagePullPolicy: corev1.PullNever, Command: []string{"true"}},
			{Name: "sidecar", Image: busyboxImage, ImagePullPolicy: corev1.PullNever, Command: []string{"true"}}}},
	}
	registered := time.Now()
	deadline := registered.Add(time.Minute)
	for {
		got, err := kube.Client().CoreV1().Pods(ns).Create(t.Context(), probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil && inject.Injected(got.Annotations) {
			t.Logf("the API server calls webhook %s %v after its registration", config, time.Since(registered).Round(time.Millisecond))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the API server does not call the webhook %s a minute after its registration (last probe: %v, annotations %v)", config, err, got.GetAnnotations())
		}
		time.Sleep(100 * time.Millisecond) // the API server's informer has no event for us: poll, bounded
	}
}

// gatedJob is a Job whose Pod can need job-signal (a main and a sidecar)
// but is never scheduled (a scheduling gate holds it): the webhook's answer
// at its creation is all that counts, and nothing runs.
func gatedJob(name string) *batchv1.Job {
	job := baselineJob(name, false)
	job.Spec.Template.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "e2e.job-signal.dev/admission-only"}}
	return job
}
