//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/job-signal/job-signal/inject"
)

// What the webhook tests do to and with a running webhook, as an operator
// would: enable a namespace with the shipped script, read /metrics, find
// the Job controller's events about a denied Pod.

// enableNamespace runs manifests/webhook/enable-namespace.sh with args,
// with the cluster's kubectl and admin kubeconfig.
func enableNamespace(t *testing.T, args ...string) {
	t.Helper()
	script := filepath.Join(filepath.Dir(mustGetwd()), "manifests", "webhook", "enable-namespace.sh")
	cmd := exec.CommandContext(t.Context(), script, args...)
	cmd.Env = append(os.Environ(), "PATH="+kube.BinDir()+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+kube.Kubeconfig())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("enable-namespace.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// metric is the value of the sample of the webhook's /metrics whose line
// starts with series (name and labels as written), 0 when there is none.
func (w *webhookProcess) metric(t *testing.T, series string) float64 {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(w.ca)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := client.Get("https://" + w.addr + "/metrics")
	if err != nil {
		t.Fatalf("the webhook's /metrics: %v", err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 4<<20))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err != nil {
				t.Fatalf("/metrics: %s: %v", sc.Text(), err)
			}
			return v
		}
	}
	return 0
}

// failedCreates is the messages of the Job controller's FailedCreate
// events in the test's namespace, by Job name: what `kubectl describe
// job` shows.
func (s *space) failedCreates() map[string][]string {
	s.t.Helper()
	events, err := kube.Client().CoreV1().Events(s.ns).List(s.ctx, metav1.ListOptions{FieldSelector: "reason=FailedCreate"})
	if err != nil {
		s.t.Fatal(err)
	}
	out := map[string][]string{}
	for _, e := range events.Items {
		if e.InvolvedObject.Kind == "Job" {
			out[e.InvolvedObject.Name] = append(out[e.InvolvedObject.Name], e.Message)
		}
	}
	return out
}

// waitFailedCreates waits until each of jobs has a FailedCreate event
// whose message contains text.
func (s *space) waitFailedCreates(jobs []string, text string, timeout time.Duration) {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		events := s.failedCreates()
		missing := []string{}
		for _, j := range jobs {
			found := false
			for _, m := range events[j] {
				found = found || strings.Contains(m, text)
			}
			if !found {
				missing = append(missing, j)
			}
		}
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("after %s, Jobs %v have no FailedCreate event saying %q; events: %v", timeout, missing, text, events)
		}
		time.Sleep(500 * time.Millisecond) // events have a watch, but one list per half second is enough here: poll, bounded
	}
}

// registerWebhook registers the chart's MutatingWebhookConfiguration for
// the webhook at addr, rendered with its URL and the cluster's CA
// (chartRegistration); each webhook's namespaceSelector also requires one
// of the given namespaces, so that tests running at the same time do not
// reach each other's webhook. Selectors, failurePolicy, timeout and
// reinvocation stay as the chart makes them. It returns once the API
// server calls the webhook.
func registerWebhook(t *testing.T, addr string, namespaces ...string) {
	t.Helper()
	registerWebhookPolicy(t, addr, "", namespaces...)
}

// downWebhook starts a webhook, registers it for namespace as shipped,
// and stops it once the API server calls it: the registration stays, the
// webhook is down. Start it again with startWebhook(t, "--listen="+addr).
func downWebhook(t *testing.T, namespace string) *webhookProcess {
	t.Helper()
	hook := startWebhook(t)
	registerWebhook(t, hook.addr, namespace)
	hook.stop(t)
	return hook
}

// registerWebhookPolicy is registerWebhook with another failurePolicy
// (the chart's failurePolicy value; empty: its default).
func registerWebhookPolicy(t *testing.T, addr string, policy admissionregistrationv1.FailurePolicyType, namespaces ...string) {
	t.Helper()
	cfg := chartRegistration(t, "https://"+addr+"/mutate", kube.CAPEM(), policy)
	cfg.Name = "job-signal-webhook-" + namespaces[0]
	for i := range cfg.Webhooks {
		w := &cfg.Webhooks[i]
		if w.NamespaceSelector == nil {
			w.NamespaceSelector = &metav1.LabelSelector{}
		}
		w.NamespaceSelector.MatchExpressions = append(w.NamespaceSelector.MatchExpressions, metav1.LabelSelectorRequirement{
			Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: namespaces})
	}
	hooks := kube.Client().AdmissionregistrationV1().MutatingWebhookConfigurations()
	if _, err := hooks.Create(t.Context(), cfg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := hooks.Delete(ctx, cfg.Name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("delete MutatingWebhookConfiguration %s: %v", cfg.Name, err)
		}
	})
	// The API server learns of webhook configurations through a watch:
	// until it has, Pods are admitted without a call (failurePolicy does not
	// apply). Probe with dry-run creations until one comes back injected.
	waitInjecting(t, cfg.Name, namespaces[0])
}

// probePod is a Pod the shipped registration sends to the webhook in any
// namespace of a test (labelled enabled), which it injects.
var probePod = &corev1.Pod{
	ObjectMeta: metav1.ObjectMeta{Name: "webhook-probe", Labels: map[string]string{inject.LabelInject: "enabled"}},
	Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{
		{Name: "main", Image: busyboxImage, ImagePullPolicy: corev1.PullNever, Command: []string{"true"}},
		{Name: "sidecar", Image: busyboxImage, ImagePullPolicy: corev1.PullNever, Command: []string{"true"}}}},
}

// waitInjecting probes namespace with dry-run creations of probePod until
// one comes back injected: the API server calls the webhook of
// configuration name (30 s at most).
func waitInjecting(t *testing.T, name, namespace string) {
	t.Helper()
	probe := probePod
	registered := time.Now()
	deadline := registered.Add(30 * time.Second)
	for {
		got, err := kube.Client().CoreV1().Pods(namespace).Create(t.Context(), probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil && inject.Injected(got.Annotations) {
			t.Logf("the API server calls webhook %s %v after its registration", name, time.Since(registered).Round(time.Millisecond))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the API server does not call the webhook %s 30 s after its registration (last probe: %v, annotations %v)", name, err, got.GetAnnotations())
		}
		time.Sleep(100 * time.Millisecond) // the API server's informer has no event for us: poll, bounded
	}
}
