//go:build e2e

// The helpers every webhook case shares (registration, probes, metrics, owned Pods): long because they are one
// vocabulary, read together.

package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

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
	return w.metricSum(t, series+" ")
}

// metricSum is the sum of the samples of the webhook's /metrics whose
// line starts with prefix: a name and its first labels
// (`NAME{form="pair",`), whatever the labels after them.
func (w *webhookProcess) metricSum(t *testing.T, prefix string) float64 {
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
	sum := 0.0
	for sc.Scan() {
		if !strings.HasPrefix(sc.Text(), prefix) {
			continue
		}
		line := sc.Text()
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64) // the value ends the line: no timestamps here
		if err != nil {
			t.Fatalf("/metrics: %s: %v", sc.Text(), err)
		}
		sum += v
	}
	return sum
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
// (chartRegistration), and its ValidatingAdmissionPolicy (registerPolicy);
// each webhook's namespaceSelector, and each binding's, also requires
// one of the given namespaces, so that tests running at the same time do
// not reach each other's webhook. The configuration's name is the chart's
// with the first namespace after it: it sorts where the chart's does.
// Selectors, failurePolicy, timeout and reinvocation stay as the chart
// makes them. It returns once the API server calls the webhook.
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

// inNamespaces is a selector term for the test's namespaces.
func inNamespaces(namespaces []string) metav1.LabelSelectorRequirement {
	return metav1.LabelSelectorRequirement{Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: namespaces}
}

// registerWebhookPolicy is registerWebhook with another failurePolicy
// (the chart's failurePolicy value; empty: its default).
func registerWebhookPolicy(t *testing.T, addr string, policy admissionregistrationv1.FailurePolicyType, namespaces ...string) {
	t.Helper()
	registerWebhookAt(t, "https://"+addr+"/mutate", kube.CAPEM(), policy, namespaces...)
}

// registerWebhookAt is registerWebhookPolicy with the webhook's URL and
// the CA of its serving certificate.
func registerWebhookAt(t *testing.T, url string, caPEM []byte, policy admissionregistrationv1.FailurePolicyType, namespaces ...string) {
	t.Helper()
	chart := chartRegistration(t, url, caPEM, policy)
	registerPolicy(t, chart, namespaces...)
	cfg := chart.config
	cfg.Name += "-" + namespaces[0]
	for i := range cfg.Webhooks {
		w := &cfg.Webhooks[i]
		if w.NamespaceSelector == nil {
			w.NamespaceSelector = &metav1.LabelSelector{}
		}
		w.NamespaceSelector.MatchExpressions = append(w.NamespaceSelector.MatchExpressions, inNamespaces(namespaces))
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

// policyMessage starts every message of the chart's policy.
const policyMessage = "job-signal: "

// registerPolicy creates the chart's ValidatingAdmissionPolicy and its
// bindings, named after the first of namespaces and bound to them only,
// and returns once the API server applies them: a dry-run creation of a
// Job's Pod with two containers there (no webhook registered for it yet)
// is refused, or, with failurePolicy Ignore, warned about.
func registerPolicy(t *testing.T, chart chartAdmission, namespaces ...string) {
	t.Helper()
	api := kube.Client().AdmissionregistrationV1()
	policy := chart.policy.DeepCopy()
	policy.Name += "-" + namespaces[0]
	if _, err := api.ValidatingAdmissionPolicies().Create(t.Context(), policy, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := api.ValidatingAdmissionPolicies().Delete(ctx, policy.Name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("delete ValidatingAdmissionPolicy %s: %v", policy.Name, err)
		}
	})
	warn := false
	for _, b := range chart.bindings {
		b = b.DeepCopy()
		b.Name += "-" + namespaces[0]
		b.Spec.PolicyName = policy.Name
		warn = warn || slices.Contains(b.Spec.ValidationActions, admissionregistrationv1.Warn)
		sel := b.Spec.MatchResources.NamespaceSelector
		sel.MatchExpressions = append(sel.MatchExpressions, inNamespaces(namespaces))
		if _, err := api.ValidatingAdmissionPolicyBindings().Create(t.Context(), b, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := api.ValidatingAdmissionPolicyBindings().Delete(ctx, b.Name, metav1.DeleteOptions{}); err != nil {
				t.Errorf("delete ValidatingAdmissionPolicyBinding %s: %v", b.Name, err)
			}
		})
	}
	warnings := &warningRecorder{}
	config := kube.RESTConfig()
	config.WarningHandler = warnings
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	// Labelled enabled: one binding or the other takes it, whether its
	// namespace is labelled or not.
	probe := jobOwnedPod("policy-probe", busyboxContainer("main"), busyboxContainer("sidecar"))
	probe.Labels = map[string]string{inject.LabelInject: "enabled"}
	registered := time.Now()
	deadline := registered.Add(30 * time.Second)
	for {
		_, err := client.CoreV1().Pods(namespaces[0]).Create(t.Context(), probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		applied := err != nil && strings.Contains(err.Error(), policyMessage)
		if warn {
			applied = err == nil && warnings.saw(policyMessage)
		}
		if applied {
			t.Logf("the API server applies policy %s %v after its registration", policy.Name, time.Since(registered).Round(time.Millisecond))
			return
		}
		if err != nil && !apierrors.IsForbidden(err) && !apierrors.IsInvalid(err) {
			t.Fatalf("the policy's probe: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the API server does not apply the policy %s 30 s after its registration (last probe: %v)", policy.Name, err)
		}
		time.Sleep(100 * time.Millisecond) // the API server's informer has no event for us: poll, bounded
	}
}

// warningRecorder keeps the warnings the API server sends a client.
type warningRecorder struct {
	mu   sync.Mutex
	text []string
}

func (w *warningRecorder) HandleWarningHeader(code int, agent, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.text = append(w.text, text)
}

func (w *warningRecorder) saw(substring string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.ContainsFunc(w.text, func(s string) bool { return strings.Contains(s, substring) })
}

// jobOwnedPod is a Pod as a Job's controller would create it (its owner a
// batch/v1 Job that need not exist), with containers; name "" is for a
// Pod named by its GenerateName.
func jobOwnedPod(name string, containers ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: []metav1.OwnerReference{
			{APIVersion: "batch/v1", Kind: "Job", Name: "e2e-job", UID: "00000000-0000-0000-0000-00000000000f"}}},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: containers},
	}
}

// busyboxContainer is a container of the suite's busybox that exits at once.
func busyboxContainer(name string) corev1.Container {
	return corev1.Container{Name: name, Image: busyboxImage, ImagePullPolicy: corev1.PullNever, Command: []string{"true"}}
}

// probeLoad is dry-run creations of probePod in one namespace, one every
// 200 ms (fewer when the API server is slower), from one client, counting
// those refused or not injected, until stop.
type probeLoad struct {
	mu      sync.Mutex
	probes  int
	refused []string // when, and the error
	halt    chan struct{}
	halted  chan struct{}
	once    sync.Once
}

// startProbes starts a probeLoad in namespace; it is stopped when the test
// ends, if not before.
func startProbes(t *testing.T, namespace string) *probeLoad {
	t.Helper()
	l := &probeLoad{halt: make(chan struct{}), halted: make(chan struct{})}
	go func() {
		defer close(l.halted)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-l.halt:
				return
			case <-tick.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			got, err := kube.Client().CoreV1().Pods(namespace).Create(ctx, probePod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			cancel()
			l.mu.Lock()
			l.probes++
			if err != nil || !inject.Injected(got.Annotations) {
				l.refused = append(l.refused, fmt.Sprintf("%s: %v", time.Now().Format(time.RFC3339Nano), err))
			}
			l.mu.Unlock()
		}
	}()
	t.Cleanup(func() { l.stop() })
	return l
}

// stop ends the load (waiting for the creation under way) and returns how
// many Pods it created and the refusals.
func (l *probeLoad) stop() (probes int, refused []string) {
	l.once.Do(func() { close(l.halt) })
	<-l.halted
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.probes, slices.Clone(l.refused)
}
