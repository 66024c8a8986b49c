package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// webhookProfile runs TestWebhookScale once more, this build alone under
// Go's CPU profiler (e2e/profiledwebhook), and says where its CPU went:
// each sample's stack is put in the first of webhookParts it matches.
func (b *bench) webhookProfile(kube string, pods int) error {
	prof := filepath.Join(b.work, "webhook-"+kube+".prof")
	output, err := b.e2eTest(fmt.Sprintf("the webhook's CPU profile on a real cluster, Kubernetes %s", kube),
		fmt.Sprintf("%d creations from 32 clients", pods), "TestWebhookScale",
		"E2E_K8S_VERSION="+kube, fmt.Sprintf("E2E_WEBHOOK_SCALE_PODS=%d", pods), "E2E_WEBHOOK_CPU_PROFILE="+prof)
	if err != nil || output == nil {
		return err
	}
	run, ok := scaleRuns(output)["this"]
	if !ok {
		os.Stderr.Write(output)
		return fmt.Errorf("e2e webhook profile on %s: no E2E_TIMING webhook_scale line", kube)
	}
	traces, err := exec.Command("go", "tool", "pprof", "-traces", filepath.Join("e2e", ".work", "bin", "job-signal-webhook-profiled"), prof).Output()
	if err != nil {
		return fmt.Errorf("go tool pprof -traces %s: %w", prof, err)
	}
	parts, total := profileSplit(traces)
	if total == 0 {
		return fmt.Errorf("the webhook's profile on %s has no samples", kube)
	}
	var out []string
	for _, p := range parts {
		share := float64(p.samples) / float64(total)
		out = append(out, fmt.Sprintf("%s %.0f%% (%s)", p.name, 100*share, human(time.Duration(share*float64(run.perPod())))))
	}
	if b.profiles == nil {
		b.profiles = map[string]string{}
	}
	b.profiles[kube] = fmt.Sprintf("under the profiler, %s per injected Pod (%d Pods, %s connections per Pod): %s",
		human(run.perPod()), run.injected, run.connections, strings.Join(out, "; "))
	return nil
}

// webhookParts name the parts of the webhook's work, each by the
// functions whose presence in a sample's stack puts it there, first match
// first.
var webhookParts = []struct{ name, funcs string }{
	{"garbage collection", "runtime.gcBgMarkWorker runtime.gcAssistAlloc runtime.bgsweep runtime.bgscavenge runtime.gcStart runtime.gcMarkDone"},
	{"TLS handshakes", "crypto/tls.(*Conn).serverHandshake"},
	{"decoding the Pod, once (inject.Parse)", "inject.Parse"},
	{"inject reading the Pod (inject.PrepareParsedFor: the PodSpec, strictly)", "inject.PrepareParsedFor inject.PrepareFor"},
	{"inject deciding the changes (Plan.Inject)", "inject.(*Plan).Inject"},
	{"the webhook reading the Pod's fields it looks at (readPod)", "webhook.readPod"},
	{"writing the JSON Patch", "webhook.setPatch inject.Patch"},
	{"LimitRanges", "webhook.fitOps webhook.(*Config).limitRanges"},
	{"writing the AdmissionReview", "webhook.writeReview"},
	{"logging", "log/slog."},
	{"the rest of the review (the annotations' size, the answer's warnings)", "webhook.(*Config).review"},
	{"reading the body", "webhook.(*Config).readBody"},
	{"decoding the AdmissionReview (its members; the Pod located and its managedFields cut)", "webhook.decodeReview"},
	{"the rest of serving the request (bounds, metrics)", "webhook.(*Config).serveMutate"},
	{"reading requests (TLS records, HTTP headers)", "net/http.(*conn).readRequest net/http.(*connReader)"},
	{"sending answers (TLS records, HTTP)", "net/http.(*response).finishRequest net/http.(*chunkWriter) crypto/tls.(*Conn).Write"},
	{"the rest of the HTTP server", "net/http.(*conn).serve"},
	{"metrics", "prometheus"},
	{"the Go scheduler", "runtime.schedule runtime.findRunnable runtime.mcall runtime.park_m"},
	{"the rest (the runtime, client-go's watch of LimitRanges)", ""},
}

type profilePart struct {
	name    string
	samples time.Duration
}

// profileSplit reads `go tool pprof -traces` and sums each sample into the
// first part whose functions its stack has; the parts come largest first.
func profileSplit(traces []byte) ([]profilePart, time.Duration) {
	sums := map[string]time.Duration{}
	var total time.Duration
	var value time.Duration
	var stack []string
	flush := func() {
		if value == 0 {
			return
		}
		total += value
		for _, p := range webhookParts {
			if p.funcs == "" || hasAny(stack, strings.Fields(p.funcs)) {
				sums[p.name] += value
				break
			}
		}
		value, stack = 0, nil
	}
	sc := bufio.NewScanner(bytes.NewReader(traces))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "-----------+") {
			flush()
			continue
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if len(fields) >= 2 && value == 0 && stack == nil {
			if d, err := time.ParseDuration(fields[0]); err == nil {
				value, fields = d, fields[1:]
			}
		}
		if value > 0 {
			stack = append(stack, fields[0])
		}
	}
	flush()
	var parts []profilePart
	for name, v := range sums {
		parts = append(parts, profilePart{name, v})
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].samples > parts[j].samples })
	return parts, total
}

func hasAny(stack, funcs []string) bool {
	for _, frame := range stack {
		for _, f := range funcs {
			if strings.Contains(frame, f) {
				return true
			}
		}
	}
	return false
}
