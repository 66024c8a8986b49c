//go:build e2e

package e2e

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/procfs"
	"github.com/job-signal/job-signal/internal/testing/procinfo"
)

// TestWebhookScale: the webhook at scale, through the API server, called
// as in a cluster (webhookclient_test.go: over HTTP/1.1 with the API
// server's pool of connections, each handshake with the key the chart's default issues),
// as shipped (mode auto, JSON logs at info). n server-side dry-run
// creations (E2E_WEBHOOK_SCALE_PODS, default 1000) of a Job's Pod
// (jobPodLike) from 32 clients at once, alternating between a namespace
// where the API server calls the webhook and one where it does not (the
// reference: the API server alone). It logs, per build, the creation
// times of both arms, the webhook's CPU time (user and system, from
// /proc) over the load, how many times the API server called it per Pod,
// how many connections it opened (TLS handshakes), its peak RSS and the
// errors; make bench turns them into rows and holds them to their targets.
// The test itself asserts only what is always true: every Pod of the
// webhook's namespace injected, none of the other's, no error.
//
// E2E_WEBHOOK_REFERENCE=BINARY measures another build too (make bench's
// previous one), in turns with this one on the same address, each a fresh
// process: two rounds of n/2 each, or E2E_WEBHOOK_SCALE_ROUNDS of
// n/rounds (make bench's, whose figure is the median round: a slow minute
// of the machine moves one round, not the figure). E2E_WEBHOOK_CPU_PROFILE=FILE runs this
// build under a CPU profiler (e2e/profiledwebhook) and writes its profile
// there.
//
// Not parallel: it runs alone, before the parallel tests, so that the
// figures are the webhook's and the API server's, not other tests'.
func TestWebhookScale(t *testing.T) {
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("E2E_WEBHOOK_SCALE_PODS")); err == nil && v > 0 {
		n = v
	}
	const clients = 32
	type build struct {
		name, bin string
		env       []string
		// What its rounds measured, summed.
		cpu                time.Duration
		hooked, plain      []time.Duration
		calls, connections float64
		rssKiB             int
		errs               []error
		form               string
		bodyLE             string          // the least bound of the body-time histogram that holds every body
		roundPerPod        []time.Duration // CPU per injected Pod, round by round
		procs              float64         // the webhook's GOMAXPROCS, from its metrics
	}
	builds := []*build{{name: "this", bin: filepath.Join(workBin(), "job-signal-webhook")}}
	if profile := os.Getenv("E2E_WEBHOOK_CPU_PROFILE"); profile != "" {
		builds[0].bin, builds[0].env = profiledWebhook(t), []string{"JOB_SIGNAL_CPU_PROFILE=" + profile}
	}
	if ref := os.Getenv("E2E_WEBHOOK_REFERENCE"); ref != "" {
		builds = append(builds, &build{name: "reference", bin: ref})
	}
	rounds := len(builds) // in turns, so that what drifts weighs on both alike
	if v, err := strconv.Atoi(os.Getenv("E2E_WEBHOOK_SCALE_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	called := newSpace(t, "webhook-scale", map[string]string{inject.LabelInject: "enabled"})
	alone := newSpace(t, "webhook-scale-ref", map[string]string{inject.LabelInject: "enabled"})
	serving := shippedServingCert(t)
	port := freeLoopbackPort(t)
	config := kube.RESTConfig()
	config.QPS, config.Burst = 1e6, 1e6 // the client's rate limit must not be in the figures
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	// create makes creation i in its arm (even: the webhook's namespace)
	// and says how long it took, and the form it was given, or what went
	// wrong.
	create := func(i int) (time.Duration, string, error) {
		ns, want := called.ns, true
		if i%2 == 1 {
			ns, want = alone.ns, false
		}
		start := time.Now()
		got, err := client.CoreV1().Pods(ns).Create(called.ctx, jobPodLike(fmt.Sprintf("scale-%d", i)), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		took := time.Since(start)
		switch {
		case err != nil:
			return took, "", err
		case inject.Injected(got.Annotations) != want:
			return took, "", fmt.Errorf("Pod %s in %s: injected %v, want %v", got.Name, ns, !want, want)
		}
		var r injectedRecord
		if want {
			if err := json.Unmarshal([]byte(got.Annotations[inject.AnnotationInjected]), &r); err != nil {
				return took, "", fmt.Errorf("Pod %s: its record: %w", got.Name, err)
			}
			r.Form = cmp.Or(r.Form, inject.FormPair) // a record without a form is the pair's
		}
		return took, string(r.Form), nil
	}
	// burst makes creations from..to-1 from the clients at once.
	burst := func(from, to int) (hooked, plain []time.Duration, form string, errs []error) {
		var mu sync.Mutex
		next := make(chan int)
		var wg sync.WaitGroup
		for range clients {
			wg.Go(func() {
				for i := range next {
					took, f, err := create(i)
					mu.Lock()
					switch {
					case err != nil:
						errs = append(errs, err)
					case i%2 == 0:
						hooked, form = append(hooked, took), f
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
		return hooked, plain, form, errs
	}
	next := 0
	for round := range rounds {
		for _, b := range builds {
			hook := startWebhookServing(t, b.bin, b.env, serving, fmt.Sprintf("--listen=127.0.0.1:%d", port), "--log-level=info", "--mode=auto")
			waitAutoDetected(t, hook)
			if round == 0 && b == builds[0] {
				registerLikeService(t, port, serving.ca, called.ns) // the other namespace is not sent to it
			}
			// Warm up: connections from the API server to the webhook, the
			// clients' to the API server, the webhook's code paths.
			if _, _, _, errs := burst(next, next+4*clients); len(errs) > 0 {
				t.Fatalf("%s build, warm-up: %d of %d creations failed, the first: %v", b.name, len(errs), 4*clients, errs[0])
			}
			next += 4 * clients
			injected := func() float64 {
				return hook.metric(t, `job_signal_webhook_admissions_total{outcome="injected",reason="none"}`)
			}
			connections := func() float64 { return hook.metric(t, "job_signal_webhook_connections_total") }
			b.procs = hook.metric(t, "go_sched_gomaxprocs_threads")
			callsBefore, connectionsBefore, bodiesBefore := injected(), connections(), hook.bodyTimes(t)
			before, err := procfs.ReadStat(hook.cmd.Process.Pid)
			if err != nil {
				t.Fatal(err)
			}
			hooked, plain, form, errs := burst(next, next+n/rounds)
			next += n / rounds
			after, err := procfs.ReadStat(hook.cmd.Process.Pid)
			if err != nil {
				t.Fatal(err)
			}
			if le, n := slowestBody(bodiesBefore, hook.bodyTimes(t)); n > 0 && (b.bodyLE == "" || boundIndex(le) > boundIndex(b.bodyLE)) {
				b.bodyLE = le
			}
			b.calls += injected() - callsBefore
			b.connections += connections() - connectionsBefore
			cpu := time.Duration(after.UTime+after.STime-before.UTime-before.STime) * time.Second / clockTicks
			b.cpu += cpu
			b.roundPerPod = append(b.roundPerPod, cpu/time.Duration(max(len(hooked), 1)))
			rss, _ := procinfo.StatusValue(hook.cmd.Process.Pid, "VmHWM")
			b.rssKiB = max(b.rssKiB, int(rss))
			b.hooked, b.plain, b.errs, b.form = append(b.hooked, hooked...), append(b.plain, plain...), append(b.errs, errs...), form
			hook.stop(t)
		}
	}
	for _, b := range builds {
		for i, err := range b.errs[:min(len(b.errs), 5)] {
			t.Errorf("%s build: creation error %d of %d: %v", b.name, i+1, len(b.errs), err)
		}
		injected := max(len(b.hooked), 1)
		perPod := b.connections / float64(injected)
		if b.connections == 0 { // a build without the metric: it served the warm-up on some
			perPod = -1
		}
		t.Logf("%s build: %d creations from %d clients: webhook arm p50 %v p99 %v, API server alone p50 %v p99 %v; "+
			"webhook CPU %v (%v per injected Pod, %.2f calls and %.3f connections per Pod, form %s), peak RSS %d KiB, %d errors",
			b.name, len(b.hooked)+len(b.plain), clients, percentile(b.hooked, 50), percentile(b.hooked, 99), percentile(b.plain, 50),
			percentile(b.plain, 99), b.cpu, b.cpu/time.Duration(injected), b.calls/float64(injected), perPod,
			b.form, b.rssKiB, len(b.errs))
		t.Logf("E2E_TIMING webhook_scale build=%s n=%d clients=%d cpu_us=%d injected=%d calls_per_pod=%.2f connections_per_pod=%.3f "+
			"peak_rss_kib=%d errors=%d gomaxprocs=%d form=%s body_le=%s hooked_us=%s plain_us=%s round_cpu_per_pod_us=%s",
			b.name, len(b.hooked)+len(b.plain), clients, b.cpu.Microseconds(), len(b.hooked), b.calls/float64(injected),
			perPod, b.rssKiB, len(b.errs), int(b.procs), b.form, cmp.Or(b.bodyLE, "none"), micros(b.hooked), micros(b.plain),
			micros(b.roundPerPod))
	}
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
