//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/servingcert"
)

// TestChartCertificateRotation: the chart as an operator installs it
// (helm install, the generate source, two replicas behind its Service,
// the API server calling them at its endpoints), its certificates made
// to last 90 s on the Deployment (the chart's validityDays is at least 90
// days, so a post-renderer changes that one argument). While dry-run Pods
// (five a second) and Jobs (one in two seconds, their Pods held by a
// scheduling gate: admission is what counts) are created in the namespace it
// serves, the replicas renew the certificate twice: not one Pod is
// refused and every one is injected. Between them the replicas issued
// once and staged and switched each renewal once, and both served the
// same certificates; each one's expiry metric is that of the certificate
// it and the Secret say is served, and each recorded the Event about its
// Pod.
func TestChartCertificateRotation(t *testing.T) {
	t.Parallel()
	s := newSpace(t, "chart-rotation")
	hook := installChartRendered(t, []string{s.ns}, shortValidity(t, rotationValidity))
	want := "--certificate-validity=" + rotationValidity.String()
	if args := hook.deployment().Spec.Template.Spec.Containers[0].Args; !slices.Contains(args, want) {
		t.Fatalf("the Deployment runs %q: the post-renderer did not set %s", args, want)
	}

	// The load, until both replicas have switched twice.
	load := startProbes(t, s.ns)
	var jobs []*batchv1.Job
	began := time.Now()
	deadline := began.Add(5 * time.Minute)
	nextJob := began
	var replicas [2][]certificateLine
	for {
		if time.Now().After(nextJob) {
			created, _ := s.createJob(gatedJob(fmt.Sprintf("rotation-%d", len(jobs))))
			jobs = append(jobs, created)
			nextJob = nextJob.Add(2 * time.Second)
		}
		replicas = hook.certificateLines(t)
		if len(servedOf(replicas[0])) >= 3 && len(servedOf(replicas[1])) >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 5 minutes the replicas have served %v and %v; want two renewals each", servedOf(replicas[0]), servedOf(replicas[1]))
		}
		time.Sleep(500 * time.Millisecond) // logs are read through the API: poll, bounded
	}
	probes, refused := load.stop()
	rotated := time.Since(began)

	// Every Job's Pod admitted, injected.
	byJob := map[string]*corev1.Pod{}
	err := s.pods.waitFor(time.Minute, func(all []observation[*corev1.Pod]) (bool, string) {
		for _, o := range all {
			for _, j := range jobs {
				if isPodOf(o.obj, j) {
					byJob[j.Name] = o.obj
				}
			}
		}
		return len(byJob) == len(jobs), fmt.Sprintf("%d Pods of %d Jobs", len(byJob), len(jobs))
	})
	if err != nil {
		t.Errorf("the Jobs' Pods: %v", err)
	}
	for _, p := range byJob {
		if !inject.Injected(p.Annotations) {
			t.Errorf("Pod %s was admitted without job-signal: %s", p.Name, podSummary(p))
		}
	}
	denied := 0
	for job, messages := range s.failedCreates() {
		denied += len(messages)
		t.Errorf("Job %s: Pods refused during the renewals: %v", job, messages)
	}
	if len(refused) > 0 {
		t.Errorf("%d of %d dry-run Pods refused during the renewals: %v", len(refused), probes, refused)
	}
	t.Logf("E2E_TIMING chart_certificate_rotation seconds=%.0f probes=%d jobs=%d refused=%d", rotated.Seconds(), probes, len(jobs), len(refused)+denied)

	checkNoFight(t, replicas)
	for _, p := range hook.pods() {
		hook.checkExpiryMetric(t, p.Name)
		checkExpiryEvent(t, hook.namespace, p.Name)
	}
}

// checkExpiryMetric: the replica's expiry metric is the expiry of the
// certificate it serves, which is the one the Secret says is served. A
// switch may fall between the reads, or the replica may not have seen the
// Secret's yet: then they are read again, for at most 30 s (switches come
// once a renewal, tens of seconds apart).
func (h *chartWebhook) checkExpiryMetric(t *testing.T, pod string) {
	t.Helper()
	last := func() string {
		b, err := kube.Client().CoreV1().Pods(h.namespace).GetLogs(pod, &corev1.PodLogOptions{Container: "webhook"}).DoRaw(t.Context())
		if err != nil {
			t.Fatalf("the logs of %s: %v", pod, err)
		}
		served := servedOf(certificateLinesOf(b))
		if len(served) == 0 {
			t.Fatalf("%s has logged no certificate served", pod)
		}
		return served[len(served)-1]
	}
	deadline := time.Now().Add(30 * time.Second)
	for ; time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) { // logs are read through the API: poll, bounded
		secret, err := kube.Client().CoreV1().Secrets(h.namespace).Get(t.Context(), h.name+"-certificate", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		state, problems := servingcert.Parse(secret.Data)
		if len(problems) > 0 || state.Served == nil || len(state.Bundle) > 3 {
			t.Fatalf("the Secret: %d CAs, served %v, %v", len(state.Bundle), state.Served != nil, problems)
		}
		before := last()
		page, err := kube.Client().CoreV1().RESTClient().Get().Namespace(h.namespace).Resource("pods").
			Name("https:" + pod + ":8443").SubResource("proxy").Suffix("metrics").DoRaw(t.Context())
		if err != nil {
			t.Fatalf("/metrics of %s: %v", pod, err)
		}
		serial := state.Served.Cert.SerialNumber.Text(16)
		if after := last(); before != serial || after != serial {
			continue // a switch between the reads
		}
		if shown := int64(samplesOf(t, page, expiryMetric+" ")); shown != state.Served.Cert.NotAfter.Unix() {
			t.Errorf("%s: %s is %d, the certificate it serves (%s) expires at %d", pod, expiryMetric, shown, serial, state.Served.Cert.NotAfter.Unix())
		}
		return
	}
	t.Errorf("%s: for 30 s its last certificate served was not the Secret's, or changed while its metric was read", pod)
}

const expiryMetric = "job_signal_webhook_certificate_expiration_timestamp_seconds"

// shortValidity writes a post-renderer for helm that sets the Deployment's
// --certificate-validity to d (sed over the rendered manifests) and
// returns its path.
func shortValidity(t *testing.T, d time.Duration) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "short-validity")
	script := fmt.Sprintf("#!/bin/sh\nexec sed -E 's/--certificate-validity=[0-9]+h$/--certificate-validity=%s/'\n", d)
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// certificateLines are the lines about the certificate of each of the two
// replicas' logs (read through the API), by the order of hook.pods().
func (h *chartWebhook) certificateLines(t *testing.T) [2][]certificateLine {
	t.Helper()
	var out [2][]certificateLine
	pods := h.pods()
	if len(pods) != 2 {
		t.Fatalf("%d Pods of the webhook, want its 2 replicas", len(pods))
	}
	for i, p := range pods {
		b, err := kube.Client().CoreV1().Pods(h.namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: "webhook"}).DoRaw(t.Context())
		if err != nil {
			t.Fatalf("the logs of %s: %v", p.Name, err)
		}
		out[i] = certificateLinesOf(b)
	}
	return out
}
