// Command bench measures what job-signal costs its users and writes the
// table to BENCHMARKS.md: stop latency (job exit to the sidecar receiving
// its stop signal), ready-gate latency, start-up overhead, the idle cost of
// a waiting sidecar-watch, binary sizes, the inject plugin's speed, stop
// latency with real sidecar programs, and, on a real one-node cluster of
// each pinned Kubernetes version, main exit and Job creation to the Job's
// Complete condition next to native sidecars and to a Job with no sidecar
// at all, and what the admission webhook adds to Pod and Job creation. Run it with
// `make bench`.
//
// Every timed moment is taken inside the processes involved (the fake
// workload, internal/testing/fake, records Unix-nanosecond events), so the harness's own
// scheduling is not part of the numbers.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"
)

func main() {
	out := flag.String("out", "BENCHMARKS.md", "where to write the report")
	scale := flag.Float64("scale", 1, "multiply every run count (0.2 for a quick look)")
	cluster := flag.Bool("cluster", true, "also measure Job completion on a real one-node cluster (needs root; see e2e/README.md)")
	base := flag.String("dir", "", "parent of the shared directories (default: /dev/shm, a tmpfs like an emptyDir with medium Memory)")
	kubernetes := flag.String("kubernetes", "", "the pinned Kubernetes versions the cluster rows run on, comma-separated (v1.30.14 or v1.30); default: every one under e2e/kubernetes/")
	before := flag.String("before", "", "also build job-signal at this git revision and time its start-up beside this one's")
	flag.StringVar(&injectReference, "inject-reference", injectReference, "git revision whose plugin the inject rows are measured against in the same run (\"\" for none)")
	only := flag.String("only", "", "run only the steps whose name matches this regular expression (stop, stop-real, floor, chain, ready, startup, window, idle, sizes, inject, cluster, slow-stop, webhook, webhook-jobs, webhook-scale), and print without writing -out")
	flag.BoolVar(&mergeRows, "merge", false, "with -only: also put this run's rows into -out, replacing those of the same name, and keep the rest")
	flag.Parse()
	if err := run(*out, *scale, *cluster, *base, *only, *kubernetes, *before); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(out string, scale float64, cluster bool, base, only, kubernetes, before string) error {
	onlyRE, err := regexp.Compile(only)
	if err != nil {
		return fmt.Errorf("-only: %w", err)
	}
	if base == "" {
		base = os.TempDir()
		if info, err := os.Stat("/dev/shm"); err == nil && info.IsDir() {
			base = "/dev/shm"
		}
	}
	work, err := os.MkdirTemp(base, "job-signal-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	b := &bench{work: work, bin: filepath.Join(work, "bin"), scale: scale, kubernetes: kubernetes, before: before}
	if err := b.build(); err != nil {
		return err
	}
	if before != "" {
		if err := b.buildBefore(); err != nil {
			return err
		}
	}
	started := time.Now()
	type step struct {
		name string
		run  func() error
	}
	steps := []step{
		{"stop", func() error { return b.stopLatency(1, false, 300) }},
		{"floor", func() error { return b.stopFloor(20, 60) }},
		{"stop", func() error { return b.stopLatency(20, false, 60) }},
		{"stop", func() error { return b.stopLatency(1, true, 40) }},
		{"stop", func() error { return b.stopLatency(20, true, 20) }},
		{"stop-real", func() error { return b.stopRealSidecars(30) }},
		{"chain", func() error { return b.stopChain(25, 5) }},
		{"chain", func() error { return b.stopChain(50, 5) }},
		{"chain", func() error { return b.stopChain(100, 5) }},
		{"ready", func() error { return b.readyGate("100ms", 60) }},
		{"ready", func() error { return b.readyGate("10ms", 60) }},
		{"startup", b.startup},
		{"window", func() error { return b.startWindow(200) }},
		{"idle", b.idle},
		{"sizes", b.sizes},
		{"inject", b.inject},
		{"webhook", b.webhookProcess},
	}
	if cluster {
		steps = append(steps, step{"cluster", b.cluster}, step{"slow-stop", b.slowStop}, step{"webhook", b.webhook},
			step{"webhook-jobs", b.webhookJobs}, step{"webhook-scale", b.webhookScale})
	}
	for _, s := range steps {
		if !onlyRE.MatchString(s.name) {
			continue
		}
		if err := s.run(); err != nil {
			return err
		}
	}
	micro, err := b.micro()
	if err != nil {
		return err
	}
	report := b.report(time.Since(started), micro)
	fmt.Print(report.table)
	if only != "" {
		fmt.Print(b.analysis())
		if mergeRows {
			return mergeInto(out, report.markdown)
		}
		return nil // a partial run does not replace the report
	}
	return os.WriteFile(out, []byte(report.markdown), 0o644)
}

// bench holds the measurements as they are taken.
type bench struct {
	work, bin  string
	scale      float64
	kubernetes string // -kubernetes
	before     string // a git revision whose job-signal is measured too
	rows       []row
	// launches are the start-up measurements by row name;
	// startupInitsText and startupParts say where job-signal's start-up
	// goes.
	launches         map[string]*launch
	refWebhook       *[2]string        // the previous build's webhook and why not, once built (previousWebhook)
	profiles         map[string]string // where the webhook's CPU goes, by Kubernetes version (webhookProfile)
	startupInitsText string
	startupParts     string
}

func (b *bench) runs(n int) int { return max(int(float64(n)*b.scale), 5) }

// build compiles the binaries as users get them: static, stripped.
func (b *bench) build() error {
	fmt.Fprintln(os.Stderr, "bench: building stripped binaries")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", b.bin+"/",
		"./cmd/job-signal", "./cmd/sidecar-watch", "./cmd/kubectl-job_signal", "./cmd/job-signal-webhook",
		"./internal/testing/fake/cmd/fake")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

func (b *bench) path(prog string) string { return filepath.Join(b.bin, prog) }

// machine describes where the numbers come from.
func machine() string {
	model := "unknown CPU"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	kernel := "?"
	if data, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel = strings.TrimSpace(string(data))
	}
	// Other work on the machine shows in every latency: say how much there was.
	load := "?"
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		load = strings.Join(strings.Fields(string(data))[:3], " ")
	}
	return fmt.Sprintf("%d cores (%s), Linux %s, %s; load average %s when the report was written",
		runtime.NumCPU(), model, kernel, runtime.Version(), load)
}
