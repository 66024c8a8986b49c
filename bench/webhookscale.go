package main

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The webhook at scale through a real API server, on each pinned
// Kubernetes version: the e2e suite's TestWebhookScale (dry-run creations
// from 32 clients, alternating between a namespace the webhook serves and
// one it does not) and TestWebhookReplicaKill (two replicas, one killed in
// a burst of Jobs), in one start of the cluster.

// scaleCPUTarget is the webhook's CPU per injected Pod, every call.
const scaleCPUTarget = time.Millisecond

func (b *bench) webhookScale() error {
	versions, err := clusterVersions(b.kubernetes)
	if err != nil {
		return err
	}
	for _, v := range versions {
		pods, jobs := b.runs(1000), max(b.runs(50), 50)
		output, err := b.e2eTest(fmt.Sprintf("webhook at scale on a real cluster, Kubernetes %s", v.Kube),
			fmt.Sprintf("%d creations from 32 clients, then %d Jobs and a replica killed", pods, jobs),
			"(TestWebhookScale|TestWebhookReplicaKill)", "E2E_K8S_VERSION="+v.Kube,
			fmt.Sprintf("E2E_WEBHOOK_SCALE_PODS=%d", pods), fmt.Sprintf("E2E_WEBHOOK_KILL_JOBS=%d", jobs))
		if err != nil || output == nil {
			return err
		}
		if err := b.scaleRows(v.Kube, output); err != nil {
			os.Stderr.Write(output)
			return err
		}
	}
	return nil
}

var (
	scaleLine = regexp.MustCompile(`E2E_TIMING webhook_scale n=(\d+) clients=(\d+) cpu_us=(\d+) injected=(\d+) calls_per_pod=([0-9.]+) ` +
		`peak_rss_kib=(\d+) errors=(\d+) gomaxprocs=\d+ hooked_us=\[([0-9 ]*)\] plain_us=\[([0-9 ]*)\]`)
	killLine = regexp.MustCompile(`E2E_TIMING webhook_kill jobs=(\d+) pods=(\d+) refusals=map\[(.*)\]`)
)

// scaleRows reads the two tests' E2E_TIMING lines into rows.
func (b *bench) scaleRows(kube string, output []byte) error {
	m := scaleLine.FindSubmatch(output)
	if m == nil {
		return fmt.Errorf("e2e webhook scale on %s: no E2E_TIMING webhook_scale line", kube)
	}
	num := func(i int) int { n, _ := strconv.Atoi(string(m[i])); return n }
	clients, cpu, injected, errs, rss := num(2), time.Duration(num(3))*time.Microsecond, num(4), num(7), int64(num(6))<<10
	calls := string(m[5])
	hooked := newRow("", parseDurations(string(m[8]), time.Microsecond))
	alone := newRow("", parseDurations(string(m[9]), time.Microsecond))
	prefix := fmt.Sprintf("webhook at scale, Kubernetes %s: ", kube)

	latency := hooked
	latency.name = fmt.Sprintf("%sPod creation through the API, webhook called, %d clients", prefix, clients)
	latency.value = fmt.Sprintf("p50 %s, p99 %s; added p50 %s, p99 %s", human(hooked.p50), human(hooked.p99),
		human(hooked.p50-alone.p50), human(hooked.p99-alone.p99))
	latency.reference = fmt.Sprintf("the API server alone, same run: p50 %s, p99 %s", human(alone.p50), human(alone.p99))
	latency.target = "p50 ≤ 2× the API server alone, 0 errors"
	latency.check = func(r row) (string, bool) {
		x := ratio(hooked.p50, alone.p50)
		return fmt.Sprintf("p50 %.2f×, %d errors", x, errs), x <= 2 && errs == 0
	}
	latency.note = fmt.Sprintf("server-side dry-run creations of a Job's Pod with a sidecar (every command given) from %d clients at once, "+
		"every other one in a namespace the webhook is not registered for (the reference); after %d to warm up; "+
		"the webhook as a process at info level", clients, 4*clients)

	perPod := cpu / time.Duration(max(injected, 1))
	cpuRow := row{name: prefix + "the webhook's CPU per injected Pod (every call)", runs: injected,
		value:  fmt.Sprintf("%s (%s for %d Pods, %s calls per Pod)", human(perPod), human(cpu), injected, calls),
		target: "≤ " + human(scaleCPUTarget)}
	cpuRow.check = func(row) (string, bool) {
		return fmt.Sprintf("%.2f× the target", ratio(perPod, scaleCPUTarget)), perPod <= scaleCPUTarget
	}
	cpuRow.note = "user and system time of the webhook process (/proc/PID/stat, 10 ms ticks) over the measured creations, " +
		"divided by the Pods it injected; the API server calls it twice per Pod (again after the ServiceAccount admission)"

	rssRow := row{name: prefix + "the webhook's peak RSS", runs: 1, value: fmt.Sprintf("%.1f MiB", float64(rss)/(1<<20)),
		target: fmt.Sprintf("< %d MiB", rssTarget>>20)}
	rssRow.check = func(row) (string, bool) {
		return fmt.Sprintf("%.2f× the target", float64(rss)/rssTarget), rss < rssTarget
	}
	b.rows = append(b.rows, latency, cpuRow, rssRow)

	k := killLine.FindSubmatch(output)
	if k == nil {
		return fmt.Errorf("e2e webhook replica kill on %s: no E2E_TIMING webhook_kill line", kube)
	}
	kill := row{name: fmt.Sprintf("%stwo replicas, one killed (SIGKILL) in a burst of %s Jobs with a sidecar", prefix, k[1]), runs: 1,
		value:  fmt.Sprintf("every Job Complete, %s Pods, none admitted without job-signal; refusals: %s", k[2], orNone(string(k[3]))),
		target: "0 Pods uninjected, every refusal one line, every Job Complete"}
	kill.check = func(row) (string, bool) { return "as the test asserts", true } // the e2e test fails otherwise
	kill.note = "the replicas behind a round-robin TCP front on 127.0.0.1 (a new connection goes to the next replica that " +
		"accepts it, as through a Service once the dead Pod has left its endpoints), registered by URL; the replica that has " +
		"injected more is killed once a third of the Pods are injected; refusals are the Jobs' FailedCreate events"
	b.rows = append(b.rows, kill)
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// webhookScaleAnalysis says, per version, what the scale rows mean.
func (b *bench) webhookScaleAnalysis() string {
	out := ""
	for _, r := range b.rows {
		prefix, ok := strings.CutSuffix(r.name, "Pod creation through the API, webhook called, 32 clients")
		if !ok || !strings.HasPrefix(prefix, "webhook at scale, ") {
			continue
		}
		cpu, ok := b.find(prefix + "the webhook's CPU per injected Pod")
		if !ok {
			continue
		}
		version := strings.TrimSuffix(strings.TrimPrefix(prefix, "webhook at scale, "), ": ")
		out += fmt.Sprintf("\nWebhook at scale, %s: with 32 clients creating Pods at once, a Pod the webhook injects is admitted in %s; "+
			"%s. The webhook spends %s of CPU on each, over every call the API server makes for it (the registration's "+
			"not-injected-yet condition spares it the reinvocation after the ServiceAccount admission).\n",
			version, r.measured(), r.reference, cpu.value)
	}
	return out
}
