//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/job-signal/job-signal/e2e/registry"
	"github.com/job-signal/job-signal/inject"
)

// TestWebhookLatency measures what the webhook adds to Pod creation through
// the API server: n creations of each kind (E2E_WEBHOOK_PODS, default 40;
// make bench asks for 200), in turns:
//
//   - not_sent: labelled job-signal.dev/inject=disabled, which the shipped
//     objectSelector keeps from the webhook (the API server alone);
//   - no_lookup: injected, every command given;
//   - uncached: injected, main's ENTRYPOINT looked up, a different image
//     each time (HEAD for the digest, then manifest and config);
//   - cached: injected, the same image each time (HEAD for the digest; the
//     config from the cache).
//
// For each it logs the create request's time as the client sees it, and
// the webhook's own handling time from its log. The Pods are gated (never
// scheduled): only admission is measured.
func TestWebhookLatency(t *testing.T) {
	t.Parallel()
	n := 40
	if v, err := strconv.Atoi(os.Getenv("E2E_WEBHOOK_PODS")); err == nil && v > 0 {
		n = v
	}
	requireLoopback(t, "the API server calls the webhook this test serves on 127.0.0.1")
	reg := registry.Start(t, "", "")
	image := func(i int) string { return fmt.Sprintf("%s/jobs/app-%d:1", reg.Host, i) }
	for i := range n + 1 { // app-n is the cached one
		registry.Push(t, image(i), registry.Image(t, []string{"/app"}, []string{fmt.Sprint(i)}), authn.Anonymous)
	}
	s := newSpace(t, "webhook-latency", map[string]string{inject.LabelInject: "enabled"})
	hook := startWebhook(t)
	registerWebhook(t, hook.addr, s.ns)
	config := kube.RESTConfig()
	config.QPS, config.Burst = 1000, 1000 // the client's rate limit must not be in the figures
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}

	variants := []struct {
		name string
		pod  func(i int) *corev1.Pod
	}{
		{"not_sent", func(int) *corev1.Pod {
			p := gatedPod("", busyboxImage, []string{"/app"})
			p.Labels[inject.LabelInject] = "disabled"
			return p
		}},
		{"no_lookup", func(int) *corev1.Pod { return gatedPod("", busyboxImage, []string{"/app"}) }},
		{"uncached", func(i int) *corev1.Pod { return gatedPod("", image(i), nil) }},
		{"cached", func(int) *corev1.Pod { return gatedPod("", image(n), nil) }},
	}
	took := map[string][]time.Duration{}
	create := func(variant string, i int, pod *corev1.Pod) {
		pod.Name = fmt.Sprintf("%s-%d", strings.ReplaceAll(variant, "_", "-"), i)
		if i < 0 {
			pod.Name = "warm-up-0" // not counted
		}
		start := time.Now()
		created, err := client.CoreV1().Pods(s.ns).Create(s.ctx, pod, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create Pod %s: %v", pod.Name, err)
		}
		if i >= 0 {
			took[variant] = append(took[variant], time.Since(start))
		}
		if injected := inject.Injected(created.Annotations); injected != (variant != "not_sent") {
			t.Fatalf("Pod %s: injected %v; annotations %v", pod.Name, injected, created.Annotations)
		}
	}
	create("cached", -1, variants[3].pod(0)) // warm: connections, and the cached image's config
	for i := range n {
		for _, v := range variants {
			create(v.name, i, v.pod(i))
		}
	}

	// The webhook's own time: its "injected" lines name the Pod, its
	// "reviewed" lines give the time; both carry the request's UID. The
	// API server would reinvoke the webhook (policy IfNeeded: the
	// ServiceAccount admission, run again after the webhook's change,
	// mounts the API token into the added init container), but the
	// registration's not-injected-yet condition leaves the injected Pod
	// out; a Pod's handling time is the sum of its calls, however many.
	handling := map[string][]time.Duration{}
	calls := map[string]int{}
	deadline := time.Now().Add(30 * time.Second)
	for {
		clear(handling)
		clear(calls)
		podOf, total := map[string]string{}, map[string]time.Duration{}
		events := hook.events(t)
		for _, e := range events {
			if e.Msg == "injected" && e.Namespace == s.ns {
				podOf[e.UID] = e.Pod
			}
		}
		for _, e := range events {
			if pod, ok := podOf[e.UID]; ok && e.Msg == "reviewed" {
				total[pod] += time.Duration(e.Elapsed)
				calls[pod]++
			}
		}
		complete := true
		for _, v := range variants[1:] {
			for i := range n {
				pod := fmt.Sprintf("%s-%d", strings.ReplaceAll(v.name, "_", "-"), i)
				complete = complete && calls[pod] > 0
				handling[v.name] = append(handling[v.name], total[pod])
			}
		}
		if complete {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s, the webhook's log lacks the handling of some of the %d Pods of each kind", n)
		}
		time.Sleep(100 * time.Millisecond) // its last lines may follow its answers: poll the log, bounded
	}
	perPod := map[int]int{}
	for _, c := range calls {
		perPod[c]++
	}
	t.Logf("webhook calls per injected Pod: %v (calls: Pods)", perPod)
	for _, v := range variants {
		line := fmt.Sprintf("E2E_TIMING webhook_latency variant=%s n=%d create_p50_ms=%.2f create_p99_ms=%.2f",
			v.name, n, ms(percentile(took[v.name], 50)), ms(percentile(took[v.name], 99)))
		if h := handling[v.name]; len(h) > 0 {
			line += fmt.Sprintf(" handling_p50_ms=%.2f handling_p99_ms=%.2f", ms(percentile(h, 50)), ms(percentile(h, 99)))
		}
		t.Log(line + " create_us=" + micros(took[v.name]) + " handling_us=" + micros(handling[v.name]))
	}
}

// percentile by nearest rank.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[max((p*len(s)+99)/100, 1)-1]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// micros writes durations as [µs µs ...], for make bench.
func micros(ds []time.Duration) string {
	var b strings.Builder
	for i, d := range ds {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatInt(d.Microseconds(), 10))
	}
	return "[" + b.String() + "]"
}
