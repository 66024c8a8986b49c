//go:build e2e

package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/servingcert"
)

// rotationValidity is how long each certificate the webhook makes lasts in
// TestWebhookCertificateRotation: renewed with a third left (about 33 s),
// served 5 s after its CA is trusted (Settle), so two switches take about
// two minutes.
const rotationValidity = 90 * time.Second

// TestWebhookCertificateRotation: the chart's generate source, as the
// chart renders it (its own release name, so that it touches nothing of
// the other tests): its ServiceAccount, RBAC, empty Secret and
// configuration without a caBundle, and two replicas of the webhook run
// with the Deployment's certificate flags (--certificate-validity=90s for
// the test) behind one address, as a Service would put them. Their rights
// are by name only (the API server's authorizer says so). They make one
// certificate, set the caBundle, and renew it twice while dry-run Pods
// (five a second) and Jobs with a sidecar (one every 6 s) keep being
// created: not one is refused, every Pod is injected, every Job completes.
// The two replicas never fight (one issue, each renewal staged once and
// switched once, both serve the same certificates in the same order);
// each shows the expiry of the certificate it serves in its metric, and
// (the certificate is within 30 days of it) an Event about its Pod.
func TestWebhookCertificateRotation(t *testing.T) {
	t.Parallel()
	// On another cluster TestChartCertificateRotation renews the chart's
	// own replicas instead.
	requireLoopback(t, "the API server calls the two replicas this test serves on 127.0.0.1")
	const release = "jsw-rotation"
	s := newSpace(t, "webhook-cert", map[string]string{inject.LabelInject: "enabled"})
	front, setBackends := roundRobinLater(t)
	source, objects := renderChart(t, "fullnameOverride="+release, "url=https://"+front+"/mutate")
	chart := installCertificateObjects(t, source, objects, s.ns)
	checkRightsByName(t, release, chart)

	kubeconfig := accountKubeconfig(t, t.TempDir(), chartNamespace, release)
	var replicas []*webhookProcess
	for i := range 2 {
		args := append(slices.Clone(chart.args), "--certificate-validity="+rotationValidity.String(),
			"--listen=127.0.0.1:0", "--metrics-listen=127.0.0.1:0", "--kubeconfig="+kubeconfig, "--namespace="+chartNamespace,
			"--mode=pair", "--log-format=json", "--log-level=info", fmt.Sprintf("--pod-name=%s-%d", release, i))
		replicas = append(replicas, runWebhook(t, filepath.Join(workBin(), "job-signal-webhook"), nil, nil, args...))
	}
	setBackends(replicas[0].addr, replicas[1].addr)
	waitInjecting(t, chart.config, s.ns)

	// The load: dry-run Pods as fast as one client makes them (five a
	// second at most), and real Jobs, until both replicas have switched
	// twice.
	load := startProbes(t, s.ns)
	jobs := []string{}
	began := time.Now()
	deadline := began.Add(5 * time.Minute)
	nextJob := began
	for {
		if time.Now().After(nextJob) {
			job := baselineJob(fmt.Sprintf("rotation-%d", len(jobs)), false)
			created, _ := s.createJob(job)
			jobs = append(jobs, created.Name)
			nextJob = nextJob.Add(6 * time.Second)
		}
		a, b := servedSerials(t, replicas[0]), servedSerials(t, replicas[1])
		if len(a) >= 3 && len(b) >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 5 minutes the replicas have served %v and %v; want two renewals each", a, b)
		}
		time.Sleep(500 * time.Millisecond) // the replicas' logs have no watch here: poll them, bounded
	}
	probes, refused := load.stop()
	rotated := time.Since(began)

	for _, name := range jobs {
		done, _ := s.waitJob(name, 10*time.Minute)
		expectJob(t, done, batchv1.JobComplete, batchv1.JobReasonCompletionsReached, 1, 0)
	}
	for _, o := range s.pods.latest() {
		if uninjected(o.obj) {
			t.Errorf("Pod %s was admitted without job-signal: %s", o.obj.Name, podSummary(o.obj))
		}
	}
	if failed := s.failedCreates(); len(failed) > 0 {
		t.Errorf("Pods refused during the renewals: %v", failed)
	}
	if len(refused) > 0 {
		t.Errorf("%d of %d dry-run Pods refused during the renewals: %v", len(refused), probes, refused)
	}
	t.Logf("E2E_TIMING webhook_certificate_rotation seconds=%.0f probes=%d jobs=%d refused=%d", rotated.Seconds(), probes, len(jobs), len(refused))

	checkNoFight(t, [2][]certificateLine{certificateLines(t, replicas[0]), certificateLines(t, replicas[1])})
	for i, w := range replicas {
		checkExpiryShown(t, w)
		checkExpiryEvent(t, chartNamespace, fmt.Sprintf("%s-%d", release, i))
	}
	secret, err := kube.Client().CoreV1().Secrets(chartNamespace).Get(t.Context(), chart.secret, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	state, problems := servingcert.Parse(secret.Data)
	if len(problems) > 0 || state.Served == nil || len(state.Bundle) > 3 {
		t.Errorf("the Secret at the end: %d CAs, served %v, %v", len(state.Bundle), state.Served != nil, problems)
	}
}
