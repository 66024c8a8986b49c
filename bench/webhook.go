package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"time"
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
