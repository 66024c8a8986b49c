//go:build e2e

package e2e

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/testing/hostileclient"
)

// TestWebhookHostileClients: dozens of connections to the webhook that
// hold it as long as they can (internal/testing/hostileclient: handshakes
// never finished, headers and bodies a byte a second, lengths declared
// and never sent, half a body and a stall; each opened again once cut),
// while Job Pods are admitted through the API server, which calls the
// webhook as in a cluster (webhookclient_test.go). In turns: creations
// with no attack, then the same with it, twice (E2E_WEBHOOK_HOSTILE_PODS
// creations in all, 400 by default, from 8 clients), then three real Jobs
// created during the attack, which goes on until the webhook has cut a
// connection of every kind. Every Pod is injected and every creation
// succeeds; it logs both arms' times, what the webhook held during the
// attack (connections, goroutines, RSS) and how long it held each kind
// of connection, for make bench.
//
// Not parallel: its figures are the webhook's and the API server's.
func TestWebhookHostileClients(t *testing.T) {
	n := 400
	if v, err := strconv.Atoi(os.Getenv("E2E_WEBHOOK_HOSTILE_PODS")); err == nil && v > 0 {
		n = v
	}
	const clients, perTrick = 8, 8
	s := newSpace(t, "webhook-hostile", map[string]string{inject.LabelInject: "enabled"})
	serving := shippedServingCert(t)
	port := freeLoopbackPort(t)
	hook := startWebhookServing(t, fmt.Sprintf("%s/job-signal-webhook", workBin()), nil, serving,
		fmt.Sprintf("--listen=127.0.0.1:%d", port), "--log-level=info", "--mode=auto")
	waitAutoDetected(t, hook)
	registerLikeService(t, port, serving.ca, s.ns)
	config := kube.RESTConfig()
	config.QPS, config.Burst = 1e6, 1e6
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	// burst makes creations from..to-1 from the clients at once, and says
	// how long each took.
	burst := func(from, to int) ([]time.Duration, []error) {
		var mu sync.Mutex
		var took []time.Duration
		var errs []error
		next := make(chan int)
		var wg sync.WaitGroup
		for range clients {
			wg.Go(func() {
				for i := range next {
					start := time.Now()
					got, err := client.CoreV1().Pods(s.ns).Create(s.ctx, jobPodLike(fmt.Sprintf("hostile-%d", i)),
						metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
					d := time.Since(start)
					if err == nil && !inject.Injected(got.Annotations) {
						err = fmt.Errorf("Pod %s admitted without job-signal: %v", got.Name, got.Annotations)
					}
					mu.Lock()
					if err != nil {
						errs = append(errs, err)
					} else {
						took = append(took, d)
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
		return took, errs
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(serving.ca)
	tlsConfig := &tls.Config{RootCAs: pool, ServerName: "localhost"}
	held := perTrick * len(hostileclient.Tricks)
	if _, errs := burst(0, 4*clients); len(errs) > 0 { // warm up
		t.Fatalf("warm-up: %d creations failed, the first: %v", len(errs), errs[0])
	}
	// How long the API server's reviews take to arrive after their
	// headers: the webhook's histogram over the first round without the
	// attack, and over a few Pods of a megabyte.
	bodies := hook.bodyTimes(t)
	for i := range 5 {
		pod := jobPodLike(fmt.Sprintf("hostile-large-%d", i))
		pod.Spec.Containers[0].Env = append(pod.Spec.Containers[0].Env, corev1.EnvVar{Name: "LARGE", Value: strings.Repeat("x", 1<<20)})
		if _, err := client.CoreV1().Pods(s.ns).Create(s.ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			t.Fatalf("a Pod of a megabyte: %v", err)
		}
	}
	largeLE, _ := slowestBody(bodies, hook.bodyTimes(t))
	var calm, attacked []time.Duration
	var cut map[hostileclient.Trick][]time.Duration
	var during webhookLoad
	calmLoad := hook.load(t)
	next := 4 * clients
	var calmLE string
	for round := range 2 {
		bodies := hook.bodyTimes(t)
		took, errs := burst(next, next+n/4)
		next += n / 4
		calm = append(calm, took...)
		if round == 0 {
			calmLE, _ = slowestBody(bodies, hook.bodyTimes(t))
		}
		for _, err := range errs[:min(len(errs), 3)] {
			t.Errorf("round %d, no attack: %v", round, err)
		}
		a := hostileclient.Start(hook.addr, "/mutate", tlsConfig, perTrick, hostileclient.Tricks...)
		for deadline := time.Now().Add(30 * time.Second); a.Opened() < held; {
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d hostile connections opened in 30 s: %v", a.Opened(), held, a.Err())
			}
			time.Sleep(20 * time.Millisecond) // the attack's own count: no event to wait on, poll, bounded
		}
		took, errs = burst(next, next+n/4)
		next += n / 4
		attacked = append(attacked, took...)
		for _, err := range errs[:min(len(errs), 3)] {
			t.Errorf("round %d, under attack: %v", round, err)
		}
		if round == 1 {
			during = hook.load(t)
			// Real Jobs, their Pods created by the Job controller during
			// the attack.
			var jobs []string
			for i := range 3 {
				job := plainJob(fmt.Sprintf("hostile-%d", i), nil, shortMain, busyboxSidecar("sidecar"))
				s.createJob(job)
				jobs = append(jobs, job.Name)
			}
			s.waitInjectedPods(jobs, 2*time.Minute)
			for _, name := range jobs {
				job, _ := s.waitJob(name, 2*time.Minute)
				expectJob(t, job, batchv1.JobComplete, "", 1, 0)
			}
			// Those that never send headers are cut after HeaderTimeout
			// (10 s): the attack goes on until each kind has been.
			for deadline := time.Now().Add(time.Minute); len(mergeHeld(maps.Clone(cut), a.Held())) < len(hostileclient.Tricks); {
				if time.Now().After(deadline) {
					t.Fatalf("after a minute, the webhook has cut only %v", mergeHeld(maps.Clone(cut), a.Held()))
				}
				time.Sleep(200 * time.Millisecond) // the attack's own record: no event to wait on, poll, bounded
			}
		}
		cut = mergeHeld(cut, a.Held())
		a.Stop()
		if err := a.Err(); err != nil {
			t.Logf("some hostile connections could not be opened (the webhook closed them in their handshake): %v", err)
		}
	}
	var kinds []string
	for _, trick := range hostileclient.Tricks {
		times := cut[trick]
		if len(times) == 0 {
			t.Errorf("%s: the webhook cut none", trick)
			continue
		}
		kinds = append(kinds, fmt.Sprintf("%s:%d:%d:%d", trick, len(times), percentile(times, 50).Milliseconds(), slices.Max(times).Milliseconds()))
	}
	t.Logf("%d hostile connections held; Job Pods admitted: p50 %v, p99 %v of %d without the attack, p50 %v, p99 %v of %d during it; "+
		"the webhook during the attack: %+v, without it: %+v; cut (trick:count:p50 ms:max ms) %s",
		held, percentile(calm, 50), percentile(calm, 99), len(calm), percentile(attacked, 50), percentile(attacked, 99), len(attacked),
		during, calmLoad, strings.Join(kinds, " "))
	t.Logf("E2E_TIMING webhook_hostile held=%d clients=%d goroutines_calm=%d goroutines_attack=%d rss_calm_kib=%d rss_attack_kib=%d "+
		"open_attack=%d body_le=%s body_le_large=%s cut=%s calm_us=%s attacked_us=%s",
		held, clients, calmLoad.goroutines, during.goroutines, calmLoad.rssKiB, during.rssKiB, during.open, calmLE, largeLE,
		strings.Join(kinds, ","), micros(calm), micros(attacked))
}

// webhookLoad is what the webhook holds at a moment.
type webhookLoad struct {
	goroutines, rssKiB, open int // open: connections, all states
}

func (w *webhookProcess) load(t *testing.T) webhookLoad {
	t.Helper()
	open := 0.0
	for _, state := range []string{"waiting", "active", "idle"} {
		open += w.metric(t, `job_signal_webhook_connections{state="`+state+`"}`)
	}
	return webhookLoad{goroutines: int(w.metric(t, "go_goroutines")), rssKiB: int(w.metric(t, "process_resident_memory_bytes")) >> 10, open: int(open)}
}

func mergeHeld(into, more map[hostileclient.Trick][]time.Duration) map[hostileclient.Trick][]time.Duration {
	if into == nil {
		into = map[hostileclient.Trick][]time.Duration{}
	}
	for k, v := range more {
		into[k] = append(into[k], v...)
	}
	return into
}

// waitInjectedPods waits until each of jobs has a Pod, injected.
func (s *space) waitInjectedPods(jobs []string, timeout time.Duration) {
	s.t.Helper()
	err := s.pods.waitFor(timeout, func(all []observation[*corev1.Pod]) (bool, string) {
		missing := slices.Clone(jobs)
		for _, o := range all {
			if i := slices.Index(missing, o.obj.Labels["job-name"]); i >= 0 && inject.Injected(o.obj.Annotations) {
				missing = slices.Delete(missing, i, i+1)
			}
		}
		return len(missing) == 0, fmt.Sprintf("no injected Pod yet for %v", missing)
	})
	if err != nil {
		s.t.Fatal(err)
	}
}
