package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"time"

	"github.com/job-signal/job-signal/internal/testing/hostileregistry"
)

// webhookVariants are the kinds of Pod creation TestWebhookLatency times,
// by the name its E2E_TIMING lines use.
var webhookVariants = []struct{ key, what string }{
	{"not_sent", "not sent to the webhook"},
	{"no_lookup", "injected, every command given"},
	{"uncached", "injected, ENTRYPOINT looked up, uncached"},
	{"cached", "injected, ENTRYPOINT looked up, cached"},
}

// webhook runs the e2e suite's TestWebhookLatency on its one-node cluster:
// job-signal-webhook as a process, registered with the shipped
// configuration, a real registry, and n Pod creations of each kind through
// the API (see e2e/README.md).
func (b *bench) webhook() error {
	n := b.runs(200)
	output, err := b.e2eTest("webhook admission on a real cluster", fmt.Sprintf("%d Pods of each kind", n),
		"TestWebhookLatency", fmt.Sprintf("E2E_WEBHOOK_PODS=%d", n))
	if err != nil || output == nil {
		return err
	}
	for _, v := range webhookVariants {
		re := regexp.MustCompile(`webhook_latency variant=` + v.key + ` .*create_us=\[([0-9 ]*)\] handling_us=\[([0-9 ]*)\]`)
		found := re.FindSubmatch(output)
		if found == nil {
			os.Stderr.Write(output)
			return fmt.Errorf("e2e webhook latency: no E2E_TIMING line for %s", v.key)
		}
		create := newRow("webhook: Pod creation through the API, "+v.what, parseDurations(string(found[1]), time.Microsecond))
		if v.key == "not_sent" {
			create.note = "the API server alone: the Pod is labelled job-signal.dev/inject=disabled, which the shipped objectSelector excludes"
		}
		b.rows = append(b.rows, create)
		if handling := parseDurations(string(found[2]), time.Microsecond); len(handling) > 0 {
			b.rows = append(b.rows, newRow("webhook: its own handling time per Pod, "+v.what, handling))
		}
	}
	return nil
}

// e2eTest runs one test of the e2e suite, which starts and stops its
// cluster, with more environment, and returns its output (shown on error).
// Without root it adds a row saying what was skipped and returns nil.
func (b *bench) e2eTest(what, runs, name string, env ...string) ([]byte, error) {
	if os.Getuid() != 0 {
		b.rows = append(b.rows, row{name: what, value: "skipped: needs root (make e2e's cluster)"})
		return nil, nil
	}
	fmt.Fprintf(os.Stderr, "bench: %s, %s (starts the cluster as make e2e does)\n", what, runs)
	cmd := exec.Command("go", "test", "-tags", "e2e", "-count=1", "-v", "-timeout", "60m", "-run", "^"+name+"$", "./e2e/")
	cmd.Env = append(os.Environ(), env...)
	output, err := cmd.CombinedOutput()
	if err != nil {
		os.Stderr.Write(output)
		return nil, fmt.Errorf("e2e %s: %w", name, err)
	}
	return output, nil
}

// webhookAnalysis explains the webhook rows with this run's numbers.
func (b *bench) webhookAnalysis() string {
	alone, ok1 := b.find("webhook: Pod creation through the API, not sent")
	given, ok2 := b.find("webhook: Pod creation through the API, injected, every command")
	uncached, ok3 := b.find("webhook: Pod creation through the API, injected, ENTRYPOINT looked up, uncached")
	cached, ok4 := b.find("webhook: Pod creation through the API, injected, ENTRYPOINT looked up, cached")
	handled, ok5 := b.find("webhook: its own handling time per Pod, injected, every command")
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
		return ""
	}
	return fmt.Sprintf("\nWebhook: injecting a Pod whose commands are all given adds %s to its creation through the API (p50), "+
		"of which the webhook itself spends %s; the rest is the API server's: it calls the webhook twice (reinvocationPolicy "+
		"IfNeeded, as shipped: its ServiceAccount admission, run again after the webhook's patch, mounts the API token into the "+
		"install container, a change that makes it call again; the second call patches nothing), over HTTPS with JSON, and "+
		"stores a larger Pod. Looking an ENTRYPOINT up adds %s more when the image is in the cache (a HEAD request for the "+
		"tag's digest) and %s when it is not (manifest and config too), against a registry on the same machine.\n",
		human(given.p50-alone.p50), human(handled.p50), human(cached.p50-given.p50), human(uncached.p50-given.p50))
}

// webhookProcess measures job-signal-webhook as a process on 127.0.0.1
// (webhookload.go): admission latency against the previous build's,
// interleaved request by request, and peak RSS under 8 concurrent
// requests of the largest size it accepts and under a hostile registry.
// The previous build is git revision main (BENCH_WEBHOOK_REF), built here.
func (b *bench) webhookProcess() error {
	reg, err := hostileRegistry()
	if err != nil {
		return err
	}
	defer reg.Close()
	ref, refName, why := b.previousWebhook()
	if err := b.webhookLatency(reg, ref, refName, why); err != nil {
		return err
	}
	if err := b.webhookCPU(ref, refName, why); err != nil {
		return err
	}
	return b.webhookMemory(reg, ref, refName, why)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// webhookLatency times reviews by this build and by ref, alternately.
func (b *bench) webhookLatency(reg *hostileregistry.Registry, ref, refName, why string) error {
	ours, err := b.startWebhookProc(b.path("job-signal-webhook"), nil)
	if err != nil {
		return err
	}
	defer ours.stop()
	var theirs *webhookProc
	if ref != "" {
		if theirs, err = b.startWebhookProc(ref, nil); err != nil {
			return err
		}
		defer theirs.stop()
	}
	for _, kind := range []struct{ what, image string }{
		{"every command given", ""},
		{"ENTRYPOINT looked up, cached", reg.Image(hostileregistry.Honest)},
	} {
		body := benchReview("busybox:1.37", []string{"/export"}, 0)
		if kind.image != "" {
			body = benchReview(kind.image, nil, 0)
		}
		n := b.runs(400)
		fmt.Fprintf(os.Stderr, "bench: webhook process, %s: %d reviews each\n", kind.what, n)
		var mine, previous []time.Duration
		for i := range n + 20 { // 20 to warm connections and the cache
			for turn := range 2 {
				w, into := ours, &mine
				if (i+turn)%2 == 1 {
					w, into = theirs, &previous
				}
				if w == nil {
					continue
				}
				took, outcome, err := w.review(body)
				if err != nil || outcome != "injected" {
					return fmt.Errorf("webhook latency, %s: %s, %v", kind.what, outcome, err)
				}
				if i >= 20 {
					*into = append(*into, took)
				}
			}
		}
		r := newRow("webhook process: admission latency, "+kind.what, mine)
		r.note = "one HTTPS request at a time on a kept-alive connection, from sending the AdmissionReview to reading the answer; " +
			"the previous build's requests interleaved with these"
		if theirs == nil {
			r.reference = refName + "'s build: " + why
		} else {
			p := newRow("", previous)
			r.reference = fmt.Sprintf("%s's build: p50 %s, p99 %s", refName, human(p.p50), human(p.p99))
			r.target = "≤ 1.10× the previous build"
			r.check = func(r row) (string, bool) {
				a, b := ratio(r.p50, p.p50), ratio(r.p99, p.p99)
				return fmt.Sprintf("p50 %.2f×, p99 %.2f×", a, b), a <= 1.10 && b <= 1.10
			}
		}
		b.rows = append(b.rows, r)
	}
	return nil
}

// webhookMemory measures peak RSS, each load on a fresh process.
func (b *bench) webhookMemory(reg *hostileregistry.Registry, ref, refName, why string) error {
	small := len(benchReview("busybox:1.37", []string{"/export"}, 0))
	largest := benchReview("busybox:1.37", []string{"/export"}, maxRequest-small-64)
	var hostile [][]byte
	for _, trick := range hostileregistry.Tricks {
		hostile = append(hostile, benchReview(reg.Image(trick), nil, 0))
	}
	loads := []struct {
		what   string
		bodies [][]byte
		rounds int
		flags  []string
		ref    bool
	}{
		{fmt.Sprintf("8 concurrent requests of %d MiB", maxRequest>>20), [][]byte{largest}, 5, nil, true},
		{fmt.Sprintf("a hostile registry (%d tricks, 8 concurrent lookups of each)", len(hostileregistry.Tricks)), hostile, 3,
			[]string{"--registry-timeout=2s"}, false},
	}
	for _, load := range loads {
		fmt.Fprintf(os.Stderr, "bench: webhook process: peak RSS under %s\n", load.what)
		peak := func(bin string, env ...string) (int64, int64, map[string]int, error) {
			w, err := b.startWebhookProc(bin, env, load.flags...)
			if err != nil {
				return 0, 0, nil, err
			}
			defer w.stop()
			idle := w.peakRSS()
			counts, err := w.concurrently(load.bodies, 8, load.rounds)
			if err != nil {
				fmt.Fprintf(os.Stderr, "bench: %s: %d requests failed, the first: %v\n", bin, counts["failed"], err)
			}
			return idle, w.peakRSS(), counts, nil
		}
		idle, high, counts, err := peak(b.path("job-signal-webhook"))
		if err != nil {
			return fmt.Errorf("webhook peak RSS under %s: %w", load.what, err)
		}
		r := row{name: "webhook process: peak RSS under " + load.what, runs: load.rounds,
			value: fmt.Sprintf("%.1f MiB", float64(high)/(1<<20)), target: fmt.Sprintf("< %d MiB (shipped limit 256 Mi)", rssTarget>>20)}
		r.check = func(row) (string, bool) {
			return fmt.Sprintf("%.2f× the target", float64(high)/rssTarget), high < rssTarget
		}
		_, unlimited, _, err := peak(b.path("job-signal-webhook"), "GOMEMLIMIT=off")
		if err != nil {
			return err
		}
		r.note = fmt.Sprintf("VmHWM of a fresh process (%.1f MiB idle); answers: %v; %.1f MiB without the webhook's soft memory limit (GOMEMLIMIT=off)",
			float64(idle)/(1<<20), counts, float64(unlimited)/(1<<20))
		switch {
		case !load.ref:
			r.reference = "not run with the previous build: it read endless answers whole (gigabytes)"
		case ref == "":
			r.reference = refName + "'s build: " + why
		default:
			_, refHigh, refCounts, err := peak(ref)
			if err != nil {
				return err
			}
			r.reference = fmt.Sprintf("%s's build: %.1f MiB (answers %v)", refName, float64(refHigh)/(1<<20), refCounts)
		}
		b.rows = append(b.rows, r)
	}
	return nil
}
