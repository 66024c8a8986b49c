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
// Kubernetes version, called as a cluster calls it (see
// e2e/webhookclient_test.go): the e2e suite's TestWebhookScale (dry-run
// creations from 32 clients, alternating between a namespace the webhook
// serves and one it does not; this build and the previous one in turns),
// TestWebhookReplicaKill (two replicas, one killed in a burst of Jobs) and
// TestWebhookHostileClients (Job Pods admitted beside dozens of hostile
// connections), in one start of the cluster; then TestWebhookScale again
// under Go's CPU profiler, to say where the CPU goes (webhookprofile.go).

// scaleCPUTarget is the webhook's CPU per injected Pod, every call.
const scaleCPUTarget = time.Millisecond

// scaleRounds is how many rounds each build's scale figure is the median
// of.
const scaleRounds = 6

func (b *bench) webhookScale() error {
	versions, err := clusterVersions(b.kubernetes)
	if err != nil {
		return err
	}
	ref, refName, why := b.previousWebhook()
	for _, v := range versions {
		// 6,000 creations in six rounds per build, in turns, 500 injected
		// per build and round (50 of /proc's 10 ms ticks and more), the
		// figure the median round: the machine's drift moved a figure
		// summed over two rounds from one run to the next by more than a
		// change to the webhook does (the commit that made it six says by
		// how much).
		pods, jobs, hostile := b.runs(6000), max(b.runs(50), 50), b.runs(1000)
		env := []string{"E2E_K8S_VERSION=" + v.Kube, fmt.Sprintf("E2E_WEBHOOK_SCALE_PODS=%d", pods), "E2E_WEBHOOK_SCALE_ROUNDS=" + strconv.Itoa(scaleRounds),
			fmt.Sprintf("E2E_WEBHOOK_KILL_JOBS=%d", jobs), fmt.Sprintf("E2E_WEBHOOK_HOSTILE_PODS=%d", hostile)}
		if ref != "" {
			env = append(env, "E2E_WEBHOOK_REFERENCE="+ref)
		}
		output, err := b.e2eTest(fmt.Sprintf("webhook at scale on a real cluster, Kubernetes %s", v.Kube),
			fmt.Sprintf("%d creations from 32 clients, then %d Jobs and a replica killed, then %d creations beside hostile clients", pods, jobs, hostile),
			"(TestWebhookScale|TestWebhookReplicaKill|TestWebhookHostileClients)", env...)
		if err != nil || output == nil {
			return err
		}
		if err := b.scaleRows(v.Kube, output, refName, why); err != nil {
			os.Stderr.Write(output)
			return err
		}
		if err := b.webhookProfile(v.Kube, pods); err != nil {
			return err
		}
	}
	return nil
}

// previousWebhook is the previous build's webhook (git revision main, or
// BENCH_WEBHOOK_REF), built once for every step that compares with it;
// "" and why when it cannot be built.
func (b *bench) previousWebhook() (bin, name, why string) {
	name = cmpOr(os.Getenv("BENCH_WEBHOOK_REF"), "main")
	if b.refWebhook == nil {
		fmt.Fprintf(os.Stderr, "bench: building %s's webhook as the reference\n", name)
		bin, why := b.referenceWebhook(name)
		b.refWebhook = &[2]string{bin, why}
	}
	return b.refWebhook[0], name, b.refWebhook[1]
}

var (
	scaleLine = regexp.MustCompile(`E2E_TIMING webhook_scale build=(\w+) n=(\d+) clients=(\d+) cpu_us=(\d+) injected=(\d+) calls_per_pod=([0-9.]+) ` +
		`connections_per_pod=(-?[0-9.]+) peak_rss_kib=(\d+) errors=(\d+) gomaxprocs=(\d+) form=(\w*) body_le=(\S+) hooked_us=\[([0-9 ]*)\] plain_us=\[([0-9 ]*)\]` +
		` round_cpu_per_pod_us=\[([0-9 ]*)\]`)
	killLine    = regexp.MustCompile(`E2E_TIMING webhook_kill jobs=(\d+) pods=(\d+) refusals=map\[(.*)\]`)
	hostileLine = regexp.MustCompile(`E2E_TIMING webhook_hostile held=(\d+) clients=(\d+) goroutines_calm=(\d+) goroutines_attack=(\d+) ` +
		`rss_calm_kib=(\d+) rss_attack_kib=(\d+) open_attack=(\d+) body_le=(\S+) body_le_large=(\S+) cut=(\S*) calm_us=\[([0-9 ]*)\] attacked_us=\[([0-9 ]*)\]`)
)

// scaleRun is one build's E2E_TIMING webhook_scale line.
type scaleRun struct {
	clients, injected, errs int
	cpu                     time.Duration
	calls, connections      string
	rss                     int64
	form, bodyLE            string
	hooked, alone           row
	rounds                  []time.Duration // CPU per injected Pod, round by round
	procs                   int             // the webhook's GOMAXPROCS
}

func (r scaleRun) perPod() time.Duration { return r.cpu / time.Duration(max(r.injected, 1)) }

// median is the median round's CPU per injected Pod, and the rounds'.
func (r scaleRun) median() (time.Duration, string) {
	sorted := newRow("", r.rounds)
	return sorted.p50, humans(r.rounds)
}

func scaleRuns(output []byte) map[string]scaleRun {
	runs := map[string]scaleRun{}
	for _, m := range scaleLine.FindAllSubmatch(output, -1) {
		num := func(i int) int { n, _ := strconv.Atoi(string(m[i])); return n }
		runs[string(m[1])] = scaleRun{clients: num(3), cpu: time.Duration(num(4)) * time.Microsecond, injected: num(5),
			calls: string(m[6]), connections: string(m[7]), rss: int64(num(8)) << 10, errs: num(9), procs: num(10), form: string(m[11]), bodyLE: string(m[12]),
			hooked: newRow("", parseDurations(string(m[13]), time.Microsecond)), alone: newRow("", parseDurations(string(m[14]), time.Microsecond)),
			rounds: parseDurations(string(m[15]), time.Microsecond)}
	}
	return runs
}

// scaleRows reads the three tests' E2E_TIMING lines into rows.
func (b *bench) scaleRows(kube string, output []byte, refName, why string) error {
	runs := scaleRuns(output)
	this, ok := runs["this"]
	if !ok {
		return fmt.Errorf("e2e webhook scale on %s: no E2E_TIMING webhook_scale line for this build", kube)
	}
	prefix := fmt.Sprintf("webhook at scale, Kubernetes %s: ", kube)
	hooked, alone := this.hooked, this.alone
	latency := hooked
	latency.name = fmt.Sprintf("%sPod creation through the API, webhook called, %d clients", prefix, this.clients)
	latency.value = fmt.Sprintf("p50 %s, p99 %s; added p50 %s, p99 %s", human(hooked.p50), human(hooked.p99),
		human(hooked.p50-alone.p50), human(hooked.p99-alone.p99))
	latency.reference = fmt.Sprintf("the API server alone, same run: p50 %s, p99 %s", human(alone.p50), human(alone.p99))
	latency.target = "p50 ≤ 2× the API server alone, 0 errors"
	latency.check = func(r row) (string, bool) {
		x := ratio(hooked.p50, alone.p50)
		return fmt.Sprintf("p50 %.2f×, %d errors", x, this.errs), x <= 2 && this.errs == 0
	}
	latency.note = fmt.Sprintf("server-side dry-run creations of a Job's Pod as an application's chart and the Job controller make it "+
		"(internal/testing/webhooktest.AppJobPod, run by e2e/webhookclient_test.go: jobPodLike; every command given) from %d clients at once, every other one in a namespace the "+
		"webhook is not registered for (the reference); after %d to warm up; the webhook as shipped (mode auto, JSON logs at info, "+
		"the serving certificate the chart's default issues, ECDSA P-256), called as behind a Service: over HTTP/1.1 through the API server's pool of "+
		"connections (registered under the host name, which is 127.0.0.1; 127.0.0.1 itself would be called with HTTP/2)", this.clients, 4*this.clients)

	perPod, rounds := this.median()
	cpuRow := row{name: prefix + "the webhook's CPU per injected Pod (every call)", runs: this.injected,
		value: fmt.Sprintf("median round %s (rounds: %s; all: %s for %d Pods, %s per Pod; %s calls and %s connections per Pod, form %s, GOMAXPROCS %d)",
			human(perPod), rounds, human(this.cpu), this.injected, human(this.perPod()), this.calls, this.connections, this.form, this.procs),
		target: "≤ " + human(scaleCPUTarget)}
	cpuRow.check = func(row) (string, bool) {
		return fmt.Sprintf("%.2f× the target", ratio(perPod, scaleCPUTarget)), perPod <= scaleCPUTarget
	}
	if prev, ok := runs["reference"]; ok {
		median, rounds := prev.median()
		cpuRow.reference = fmt.Sprintf("%s's build, same run, in turns: median round %s (rounds: %s; all: %s per Pod, %d Pods, form %s, GOMAXPROCS %d)",
			refName, human(median), rounds, human(prev.perPod()), prev.injected, prev.form, prev.procs)
	} else {
		cpuRow.reference = refName + "'s build: " + cmpOr(why, "not measured")
	}
	cpuRow.note = "user and system time of the webhook process (/proc/PID/stat, 10 ms ticks) over the measured creations, " +
		"divided by the Pods it injected; connections: the TLS handshakes the API server opened meanwhile (its pool keeps 25 idle); " +
		"each build a fresh process on the same address, in turns, for each round; the figure is the median round's"

	rssRow := row{name: prefix + "the webhook's peak RSS", runs: 1, value: fmt.Sprintf("%.1f MiB", float64(this.rss)/(1<<20)),
		target: fmt.Sprintf("< %d MiB", rssTarget>>20)}
	rssRow.check = func(row) (string, bool) {
		return fmt.Sprintf("%.2f× the target", float64(this.rss)/rssTarget), this.rss < rssTarget
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
	return b.hostileRows(prefix, output)
}

// hostileRows reads TestWebhookHostileClients' line.
func (b *bench) hostileRows(prefix string, output []byte) error {
	h := hostileLine.FindSubmatch(output)
	if h == nil {
		return fmt.Errorf("e2e webhook hostile clients: no E2E_TIMING webhook_hostile line")
	}
	num := func(i int) int { n, _ := strconv.Atoi(string(h[i])); return n }
	held := num(1)
	calm := newRow("", parseDurations(string(h[11]), time.Microsecond))
	attacked := newRow(fmt.Sprintf("%sJob Pods admitted beside %d hostile connections", prefix, held), parseDurations(string(h[12]), time.Microsecond))
	attacked.reference = fmt.Sprintf("the same run without them: p50 %s, p99 %s (%d Pods)", human(calm.p50), human(calm.p99), calm.runs)
	attacked.target = "every Pod injected, p50 ≤ 1.5× without them"
	attacked.check = func(r row) (string, bool) {
		x := ratio(r.p50, calm.p50)
		return fmt.Sprintf("every Pod injected, p50 %.2f×, p99 %.2f×", x, ratio(r.p99, calm.p99)), x <= 1.5 // the test fails on a Pod not injected
	}
	var cuts []string
	for _, c := range strings.Split(string(h[10]), ",") {
		f := strings.Split(c, ":") // trick:count:p50 ms:max ms
		if len(f) == 4 {
			cuts = append(cuts, fmt.Sprintf("%s %s (held p50 %s ms, max %s ms)", f[0], f[1], f[2], f[3]))
		}
	}
	attacked.note = fmt.Sprintf("dry-run creations of jobPodLike from %d clients through the API server, in four rounds: without "+
		"the attack, with it, twice; %d connections to the webhook held meanwhile by internal/testing/hostileclient, 8 of each "+
		"trick (a TCP connection that sends nothing, a TLS handshake never finished, headers a byte a second, a length declared "+
		"and one byte sent, a body a byte a second, half a body of 2.5 MiB and a stall), each opened again once cut; cut by the "+
		"webhook: %s; then three real Jobs created during the attack, every one Complete", num(2), held, strings.Join(cuts, ", "))
	load := row{name: fmt.Sprintf("%sthe webhook beside %d hostile connections", prefix, held), runs: 1,
		value:     fmt.Sprintf("%d connections open, %d goroutines, RSS %.1f MiB", num(7), num(4), float64(num(6))/1024),
		reference: fmt.Sprintf("without them, same run: %d goroutines, RSS %.1f MiB", num(3), float64(num(5))/1024),
		target:    fmt.Sprintf("< %d MiB", rssTarget>>20)}
	load.check = func(row) (string, bool) {
		return fmt.Sprintf("%.2f× the target", float64(num(6))*1024/rssTarget), num(6)<<10 < rssTarget
	}
	load.note = "the webhook's own metrics (job_signal_webhook_connections, go_goroutines, process_resident_memory_bytes) " +
		"during the second round of the attack"
	body := row{name: prefix + "the API server's review bodies: from headers to the body's end", runs: 1,
		value: fmt.Sprintf("every one within %s s (a Job's Pod, %s Pods); every one within %s s for Pods of a megabyte (5)",
			string(h[8]), "the first round's", string(h[9])),
		target: "well within BodyTimeout (2 s)"}
	body.note = "the webhook's job_signal_webhook_request_body_seconds histogram: the least bound that holds every body " +
		"of the round, through the API server over loopback: a network adds its round trips and, for large bodies, its rate"
	b.rows = append(b.rows, attacked, load, body)
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
			"not-injected-yet condition spares it the reinvocation after the ServiceAccount admission); %s.",
			version, r.measured(), r.reference, cpu.value, cpu.reference)
		if p, ok := b.profiles[strings.TrimPrefix(version, "Kubernetes ")]; ok {
			out += " Where it goes, " + p + "."
		}
		if h, ok := b.find(prefix + "Job Pods admitted beside"); ok {
			out += fmt.Sprintf(" Beside %s, Job Pods are admitted in %s; %s.", strings.TrimPrefix(h.name, prefix+"Job Pods admitted beside "),
				h.measured(), h.reference)
		}
		out += "\n"
	}
	return out
}
