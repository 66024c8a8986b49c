//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/procfs"
)

// TestWebhookScale: the webhook at scale, through the API server. n
// server-side dry-run creations (E2E_WEBHOOK_SCALE_PODS, default 1000) of
// a Job's Pod with a sidecar, every command given, from 32 clients at
// once, alternating between a namespace where the API server calls the
// webhook and one where it does not (the reference: the API server
// alone). The webhook logs at info level, as shipped. It logs the
// creation times of both arms, the webhook's CPU time (user and system,
// from /proc) over the load, how many times the API server called it per
// Pod, its peak RSS and the errors; make bench turns them into rows and
// holds them to their targets. The test itself asserts only what is
// always true: every Pod of the webhook's namespace injected, none of the
// other's, no error.
//
// Not parallel: it runs alone, before the parallel tests, so that the
// figures are the webhook's and the API server's, not other tests'.
// E2E_WEBHOOK_CPU_PROFILE=FILE runs the webhook under a CPU profiler
// (e2e/profiledwebhook) and writes its profile there.
func TestWebhookScale(t *testing.T) {
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("E2E_WEBHOOK_SCALE_PODS")); err == nil && v > 0 {
		n = v
	}
	const clients = 32
	called := newSpace(t, "webhook-scale", map[string]string{inject.LabelInject: "enabled"})
	alone := newSpace(t, "webhook-scale-ref", map[string]string{inject.LabelInject: "enabled"})
	var hook *webhookProcess
	if profile := os.Getenv("E2E_WEBHOOK_CPU_PROFILE"); profile != "" {
		hook = startWebhookBinary(t, profiledWebhook(t), []string{"JOB_SIGNAL_CPU_PROFILE=" + profile}, "--log-level=info")
	} else {
		hook = startWebhook(t, "--log-level=info")
	}
	registerWebhook(t, hook.addr, called.ns) // the other namespace is not sent to it
	config := kube.RESTConfig()
	config.QPS, config.Burst = 1e6, 1e6 // the client's rate limit must not be in the figures
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	pod := func(i int) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("scale-%d", i),
				Labels: map[string]string{"batch.kubernetes.io/job-name": "scale"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "scale",
					UID: types.UID("e2e-scale-job"), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
			Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{
					{Name: "main", Image: busyboxImage, ImagePullPolicy: corev1.PullNever, Command: []string{"sh", "-c", shortMain}},
					{Name: "sidecar", Image: busyboxImage, ImagePullPolicy: corev1.PullNever, Command: []string{"sh", "-c", termSidecar}},
				},
				TerminationGracePeriodSeconds: ptr.To(int64(10)),
			},
		}
	}
	// create makes creation i in its arm (even: the webhook's namespace)
	// and says how long it took, or what went wrong.
	create := func(i int) (time.Duration, error) {
		ns, want := called.ns, true
		if i%2 == 1 {
			ns, want = alone.ns, false
		}
		start := time.Now()
		got, err := client.CoreV1().Pods(ns).Create(called.ctx, pod(i), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		took := time.Since(start)
		switch {
		case err != nil:
			return took, err
		case inject.Injected(got.Annotations) != want:
			return took, fmt.Errorf("Pod %s in %s: injected %v, want %v", got.Name, ns, !want, want)
		}
		return took, nil
	}
	// burst makes creations from..to-1 from the clients at once.
	burst := func(from, to int) (hooked, plain []time.Duration, errs []error) {
		var mu sync.Mutex
		next := make(chan int)
		var wg sync.WaitGroup
		for range clients {
			wg.Go(func() {
				for i := range next {
					took, err := create(i)
					mu.Lock()
					switch {
					case err != nil:
						errs = append(errs, err)
					case i%2 == 0:
						hooked = append(hooked, took)
					default:
						plain = append(plain, took)
					}
					mu.Unlock()
				}
			})
		}
		for i := from; i < to; i++ {
			next <- i
		}
		close(next)
		wg.Wait()
		return hooked, plain, errs
	}
	// Warm up: connections from the API server to the webhook, the
	// clients' to the API server, the webhook's code paths.
	if _, _, errs := burst(0, 4*clients); len(errs) > 0 {
		t.Fatalf("warm-up: %d of %d creations failed, the first: %v", len(errs), 4*clients, errs[0])
	}
	calls := func() float64 {
		return hook.metric(t, `job_signal_webhook_admissions_total{outcome="injected",reason="none"}`)
	}
	callsBefore := calls()
	before, err := procfs.ReadStat(hook.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	hooked, plain, errs := burst(4*clients, 4*clients+n)
	wall := time.Since(began)
	after, err := procfs.ReadStat(hook.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	callsPerPod := (calls() - callsBefore) / float64(max(len(hooked), 1))
	rss, _ := procfs.StatusValue(hook.cmd.Process.Pid, "VmHWM")
	cpu := time.Duration(after.UTime+after.STime-before.UTime-before.STime) * time.Second / clockTicks
	perPod := cpu / time.Duration(max(len(hooked), 1))
	for i, err := range errs[:min(len(errs), 5)] {
		t.Errorf("creation error %d of %d: %v", i+1, len(errs), err)
	}
	t.Logf("%d creations from %d clients in %v: webhook arm p50 %v p99 %v, API server alone p50 %v p99 %v; "+
		"webhook CPU %v (%v per injected Pod, %.2f calls per Pod), peak RSS %d KiB, %d errors",
		n, clients, wall.Round(time.Millisecond), percentile(hooked, 50), percentile(hooked, 99), percentile(plain, 50), percentile(plain, 99),
		cpu, perPod, callsPerPod, rss, len(errs))
	t.Logf("E2E_TIMING webhook_scale n=%d clients=%d cpu_us=%d injected=%d calls_per_pod=%.2f peak_rss_kib=%d errors=%d gomaxprocs=%d hooked_us=%s plain_us=%s",
		n, clients, cpu.Microseconds(), len(hooked), callsPerPod, rss, len(errs), runtime.GOMAXPROCS(0), micros(hooked), micros(plain))
}

// clockTicks is the kernel's USER_HZ: /proc/PID/stat counts CPU time in
// these ticks per second. It is 100 on every Linux this suite runs on.
const clockTicks = 100

// profiledWebhook builds e2e/profiledwebhook (job-signal-webhook under
// a CPU profiler) once, unstripped, and returns its path.
func profiledWebhook(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(workBin(), "job-signal-webhook-profiled")
	out, err := exec.Command("go", "build", "-C", filepath.Dir(mustGetwd()), "-trimpath", "-o", bin, "./e2e/profiledwebhook").CombinedOutput()
	if err != nil {
		t.Fatalf("build e2e/profiledwebhook: %v\n%s", err, out)
	}
	return bin
}
