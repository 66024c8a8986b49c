//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/job-signal/job-signal/e2e/cluster"
	"github.com/job-signal/job-signal/inject"
)

// TestChartDrain: with the chart's defaults (two replicas, no
// PodDisruptionBudget, spread strictly over nodes), `kubectl drain` of the
// webhook's node finishes, on this one-node cluster where the replicas
// have nowhere else to go; a budget that kept one replica would block it
// for ever (README, "Drains, upgrades and uninstall"). Uncordoned, the
// webhook serves again. Not parallel: a cordoned node schedules nothing,
// and no other test runs meanwhile. Only on the cluster the suite built:
// it cordons the node.
func TestChartDrain(t *testing.T) {
	requireNodeProcesses(t, "it cordons and drains the node, which is only the suite's to do on its own cluster")
	s := newSpace(t, "chart-drain")
	hook := installChart(t, []string{s.ns})
	if n := len(hook.pods()); n != 2 {
		t.Fatalf("%d replicas, want the chart's 2", n)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := kube.Kubectl(ctx, "", "uncordon", cluster.NodeName); err != nil {
			t.Errorf("uncordon: %v", err)
		}
	})
	// Only the webhook's Pods are evicted (--pod-selector): the node is
	// cordoned all the same, and a budget would hold this drain up.
	start := time.Now()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	out, err := kube.Kubectl(ctx, "", "drain", cluster.NodeName, "--pod-selector=app="+hook.name,
		"--ignore-daemonsets", "--delete-emptydir-data", "--timeout=90s")
	took := time.Since(start)
	if err != nil {
		t.Fatalf("kubectl drain with the chart's defaults did not finish: %v\n%s", err, out)
	}
	t.Logf("E2E_TIMING chart_drain seconds=%.1f", took.Seconds())
	for _, p := range hook.pods() {
		if p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
			t.Errorf("Pod %s still runs on the drained node", p.Name)
		}
	}
	if _, err := kube.Kubectl(ctx, "", "uncordon", cluster.NodeName); err != nil {
		t.Fatal(err)
	}
	hook.waitAvailable(2 * time.Minute)
	created, _ := s.createJob(gatedJob("after-drain"))
	pod := s.waitPod("", time.Minute, func(p *corev1.Pod) bool { return isPodOf(p, created) }) // its only Pod
	if !inject.Injected(pod.Annotations) {
		t.Errorf("after the drain, Pod %s was admitted without job-signal: %v", pod.Name, pod.Annotations)
	}
}

// TestChartUpgradeUninstall: while Jobs are created, one a second, in a
// namespace the release serves, `helm upgrade` to another image of the
// webhook rolls both replicas, then `helm uninstall` removes the release.
// No Pod is refused at any point (no FailedCreate), every Pod created
// before the uninstall began is injected, and nothing of the release is
// left: its configuration, Deployment, Service, roles and the uninstall
// hook's own objects are gone.
func TestChartUpgradeUninstall(t *testing.T) {
	t.Parallel()
	s := newSpace(t, "chart-upgrade")
	hook := installChart(t, []string{s.ns})
	upgraded := upgradedWebhookImage(t)

	// One Job a second, from now until stop.
	stop := make(chan struct{})
	var mu sync.Mutex
	var created []*batchv1.Job
	each := make(chan struct{}, 1000)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			job, err := kube.Client().BatchV1().Jobs(s.ns).Create(s.ctx, gatedJob(fmt.Sprintf("during-%d", i)), metav1.CreateOptions{})
			if err != nil {
				t.Errorf("create Job during-%d: %v", i, err)
				return
			}
			mu.Lock()
			created = append(created, job)
			mu.Unlock()
			each <- struct{}{}
		}
	}()
	var stopOnce sync.Once
	halt := func() { stopOnce.Do(func() { close(stop); <-done }) }
	defer halt() // never outlives the test, even one that failed early
	// more waits until the creator has made n more Jobs.
	more := func(n int) {
		for range n {
			select {
			case <-each:
			case <-done:
				t.Fatal("the Jobs' creator stopped")
			case <-time.After(time.Minute):
				t.Fatal("no Job created for a minute")
			}
		}
	}
	more(2)

	before := hook.deployment().Spec.Template.Spec.Containers[0].Image
	start := time.Now()
	hook.upgrade(imageValues("image", upgraded)...)
	after := hook.deployment().Spec.Template.Spec.Containers[0].Image
	t.Logf("E2E_TIMING chart_upgrade seconds=%.1f (%s to %s)", time.Since(start).Seconds(), before, after)
	if before == after {
		t.Fatalf("helm upgrade left the image %s", before)
	}
	for _, p := range hook.pods() {
		if p.DeletionTimestamp == nil && p.Spec.Containers[0].Image != after {
			t.Errorf("Pod %s still runs %s after the rollout", p.Name, p.Spec.Containers[0].Image)
		}
	}
	for len(each) > 0 { // from here on, Jobs created against the new replicas alone
		<-each
	}
	more(3)

	uninstallBegan := time.Now()
	out := hook.uninstall()
	t.Logf("E2E_TIMING chart_uninstall seconds=%.1f: %s", time.Since(uninstallBegan).Seconds(), strings.TrimSpace(out))
	more(2) // and after it
	halt()

	mu.Lock()
	jobs := append([]*batchv1.Job(nil), created...)
	mu.Unlock()
	// Every Job gets its Pod: the Job controller created it, admitted.
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
	injectedN := 0
	for _, j := range jobs {
		p := byJob[j.Name]
		switch {
		case p == nil:
			t.Errorf("Job %s has no Pod a minute on", j.Name)
		case inject.Injected(p.Annotations):
			injectedN++
		case j.CreationTimestamp.Time.Before(uninstallBegan.Add(-time.Second)):
			t.Errorf("Pod %s, of a Job created before the uninstall began, was admitted without job-signal: %v", p.Name, p.Annotations)
		}
	}
	refused := 0
	for job, messages := range s.failedCreates() {
		for _, m := range messages {
			refused++
			t.Errorf("Job %s: a Pod was refused: %s", job, m)
		}
	}
	t.Logf("E2E_TIMING chart_upgrade_uninstall jobs=%d injected=%d refused=%d", len(jobs), injectedN, refused)
	if len(jobs) < 10 {
		t.Errorf("only %d Jobs created during the upgrade and the uninstall", len(jobs))
	}
	expectReleaseGone(t, hook)
}

// expectReleaseGone: nothing of an uninstalled release is left, the
// uninstall hook's objects included.
func expectReleaseGone(t *testing.T, h *chartWebhook) {
	t.Helper()
	ctx := t.Context()
	c := kube.Client()
	hookName := h.name + "-unregister"
	for what, err := range map[string]error{
		"MutatingWebhookConfiguration " + h.name: get(c.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, h.name, metav1.GetOptions{})),
		"Deployment " + h.name:                   get(c.AppsV1().Deployments(h.namespace).Get(ctx, h.name, metav1.GetOptions{})),
		"Service " + h.name:                      get(c.CoreV1().Services(h.namespace).Get(ctx, h.name, metav1.GetOptions{})),
		"ClusterRole " + h.name:                  get(c.RbacV1().ClusterRoles().Get(ctx, h.name, metav1.GetOptions{})),
		"ClusterRole " + hookName:                get(c.RbacV1().ClusterRoles().Get(ctx, hookName, metav1.GetOptions{})),
		"ClusterRoleBinding " + hookName:         get(c.RbacV1().ClusterRoleBindings().Get(ctx, hookName, metav1.GetOptions{})),
		"ServiceAccount " + hookName:             get(c.CoreV1().ServiceAccounts(h.namespace).Get(ctx, hookName, metav1.GetOptions{})),
		"Job " + hookName:                        get(c.BatchV1().Jobs(h.namespace).Get(ctx, hookName, metav1.GetOptions{})),
	} {
		if !apierrors.IsNotFound(err) {
			t.Errorf("after helm uninstall, %s: %v (want not found)", what, err)
		}
	}
}

func get[T any](_ T, err error) error { return err }

// isPodOf says whether a Pod belongs to a Job, by its controller owner.
func isPodOf(p *corev1.Pod, job *batchv1.Job) bool {
	ref := metav1.GetControllerOf(p)
	return ref != nil && ref.UID == job.UID
}

// upgradedWebhookImage is another image of the same webhook: its files
// under a name and digest of their own (the suite's image writer, with one
// more environment variable), delivered as every image is. A helm upgrade
// to it rolls the Deployment.
func upgradedWebhookImage(t *testing.T) string {
	t.Helper()
	bin, err := os.ReadFile(filepath.Join(workBin(), "job-signal-webhook"))
	if err != nil {
		t.Fatal(err)
	}
	certs, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	if err != nil {
		t.Fatal(err)
	}
	img := cluster.Image{
		Ref: "localhost/job-signal-webhook:e2e-upgraded",
		Files: []cluster.File{
			{Name: "usr/local/bin/job-signal-webhook", Mode: 0o755, Body: bin},
			{Name: "etc/ssl/certs/ca-certificates.crt", Mode: 0o644, Body: certs},
		},
		Entrypoint: []string{"/usr/local/bin/job-signal-webhook"},
		Env:        []string{"JOB_SIGNAL_E2E_UPGRADED=1"},
		User:       "65532:65532",
	}
	if err := kube.LoadImage(img); err != nil {
		t.Fatal(err)
	}
	return kube.ImageRef(img.Ref)
}
