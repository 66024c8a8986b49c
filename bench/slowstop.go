package main

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/job-signal/job-signal/e2e/cluster"
)

// slowStopVariants are the Jobs of the e2e suite's TestSlowStopSidecar, by
// the names its E2E_TIMING slowstop line uses.
var slowStopVariants = []struct{ key, what string }{
	{"pair", "job-signal"},
	{"auto", "the webhook in mode auto"},
	{"native", "native sidecar"},
}

// slowStop measures, on a real one-node cluster of each version, main's
// exit to the Job's Complete with a sidecar that ignores SIGTERM: the
// pair (sidecar-watch kills it after its grace), the webhook in mode auto
// (which must choose the pair) and a native sidecar (the kubelet waits the
// Pod's grace period), in the same run.
func (b *bench) slowStop() error { return b.eachVersion(b.slowStopVersion) }

func (b *bench) slowStopVersion(v cluster.Version) error {
	rounds := b.runs(5)
	what := fmt.Sprintf("Job completion with a sidecar that ignores SIGTERM, Kubernetes %s", v.Kube)
	output, err := b.e2eTest(what, fmt.Sprintf("%d rounds each", rounds), "TestSlowStopSidecar",
		fmt.Sprintf("E2E_TIMING_ROUNDS=%d", rounds), "E2E_K8S_VERSION="+v.Kube)
	if err != nil || output == nil {
		return err
	}
	line := regexp.MustCompile(`E2E_TIMING slowstop main_exit_to_Complete .*`).Find(output)
	if line == nil {
		os.Stderr.Write(output)
		return fmt.Errorf("e2e slow stop on %s: no E2E_TIMING slowstop line", v.Kube)
	}
	native := !strings.Contains(string(line), " native=absent ")
	var pair row
	for _, variant := range slowStopVariants {
		name := fmt.Sprintf("cluster %s: main exit to Job Complete, a sidecar ignoring SIGTERM (grace 30 s), %s", v.Kube, variant.what)
		if variant.key == "native" && !native {
			b.rows = append(b.rows, row{name: name, value: "none: this cluster runs without native sidecars (SidecarContainers=false)"})
			continue
		}
		found := regexp.MustCompile(` ` + variant.key + `_ms=\[([0-9 ]*)\]`).FindSubmatch(line)
		if found == nil {
			return fmt.Errorf("e2e slow stop on %s: no %s_ms in %s", v.Kube, variant.key, line)
		}
		r := newRow(name, parseDurations(string(found[1]), time.Millisecond))
		switch variant.key {
		case "pair":
			pair = r
		case "auto":
			r.target = "p50 within 10% of job-signal's"
			r.check = func(r row) (string, bool) {
				return fmt.Sprintf("%.3f× job-signal (%s)", ratio(r.p50, pair.p50), human(pair.p50)), r.p50 <= pair.p50*110/100
			}
		}
		b.rows = append(b.rows, r)
	}
	return nil
}

// slowStopAnalysis explains the slow-stop rows with this run's numbers.
func (b *bench) slowStopAnalysis() string {
	var out strings.Builder
	for _, r := range b.rows {
		prefix, ok := strings.CutSuffix(r.name, "job-signal")
		if !ok || !strings.Contains(prefix, "a sidecar ignoring SIGTERM") {
			continue
		}
		auto, ok1 := b.find(prefix + "the webhook in mode auto")
		native, ok2 := b.find(prefix + "native sidecar")
		if !ok1 || !ok2 {
			continue
		}
		version := strings.TrimSuffix(strings.TrimPrefix(prefix, "cluster "), ": main exit to Job Complete, a sidecar ignoring SIGTERM (grace 30 s), ")
		fmt.Fprintf(&out, "\nA sidecar that ignores SIGTERM, Kubernetes %s: from main's exit the Job is Complete after %s with the pair "+
			"(sidecar-watch kills the sidecar after its grace, 10 s) and %s as the webhook in mode auto injects it (the pair: "+
			"inject does not know the sidecar stops on its signal, and the Pod's grace is longer than the pair's)", version, human(r.p50), human(auto.p50))
		if native.value == "" {
			fmt.Fprintf(&out, "; with a native sidecar, %s: the kubelet waits the Pod's whole grace period before SIGKILL", human(native.p50))
		}
		out.WriteString(".\n")
	}
	return out.String()
}
