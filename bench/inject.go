package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/job-signal/job-signal/internal/testing/benchjobs"
)

// injectReference is the git revision whose plugin the inject rows are
// measured against, in the same run ("" for none).
var injectReference = "main"

// inject times `kubectl job-signal inject --offline -f FILE` as a user
// runs it, on one document and on 1,000: the first is the plugin's fixed
// cost, the difference the cost per document. Its peak RSS is the
// process's. The reference revision's plugin runs alternately with this
// one, on the same files.
func (b *bench) inject() error {
	runs := b.runs(10)
	fmt.Fprintf(os.Stderr, "bench: kubectl job-signal inject, %d runs\n", runs)
	ref, err := b.buildReference()
	if err != nil {
		return err
	}
	var single row
	for _, docs := range []int{1, 1000} {
		file := benchjobs.File(docs)
		path := filepath.Join(b.work, fmt.Sprintf("inject-%d.yaml", docs))
		if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
			return err
		}
		var samples, refSamples, cpus, refCPUs []time.Duration
		var peak, refPeak int64
		var outSize int
		for range runs {
			d, cpu, rss, n, err := timeInject(b.path("kubectl-job_signal"), path)
			if err != nil {
				return fmt.Errorf("kubectl-job_signal inject on %d documents: %w", docs, err)
			}
			samples, cpus, peak, outSize = append(samples, d), append(cpus, cpu), max(peak, rss), n
			if ref != "" {
				d, cpu, rss, _, err := timeInject(ref, path)
				if err != nil {
					return fmt.Errorf("the reference's kubectl-job_signal inject on %d documents: %w", docs, err)
				}
				refSamples, refCPUs, refPeak = append(refSamples, d), append(refCPUs, cpu), max(refPeak, rss)
			}
		}
		r := newRow(fmt.Sprintf("inject: `kubectl job-signal inject --offline`, %d Job document(s)", docs), samples)
		r.note = fmt.Sprintf("%d KB of YAML in, %d KB out; wall time from fork to reaped; CPU (user and system) p50 %s; peak RSS %.1f MB", len(file)/1000, outSize/1000, human(newRow("", cpus).p50), float64(peak)/1024)
		if ref != "" {
			rr := newRow("", refSamples)
			r.reference = fmt.Sprintf("%s's build: p50 %s, p99 %s, CPU p50 %s, peak RSS %.1f MB", injectReference, human(rr.p50), human(rr.p99), human(newRow("", refCPUs).p50), float64(refPeak)/1024)
			if docs > 1 { // the plugin, every edit checked by decoding it, no slower than the reference
				r.target = "p50 ≤ the reference's"
				r.check = func(r row) (string, bool) {
					return fmt.Sprintf("%.2f× the reference's p50", ratio(r.p50, rr.p50)), r.p50 <= rr.p50
				}
			}
		}
		if docs == 1 {
			single = r
		} else {
			perDoc := (r.p50 - single.p50) / time.Duration(docs-1)
			r.note += fmt.Sprintf("; %s per further document (p50, over the one-document run)", human(perDoc))
		}
		fmt.Fprintf(os.Stderr, "bench: %s: %s\n", r.name, r.note)
		b.rows = append(b.rows, r)
	}
	return nil
}

// timeInject runs the plugin once and returns its wall time, its CPU time
// (user and system: what a loaded machine does not inflate), its peak RSS
// in KB and the size of its output.
func timeInject(plugin, path string) (time.Duration, time.Duration, int64, int, error) {
	cmd := exec.Command(plugin, "inject", "--offline", "-f", path)
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
	begin := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, 0, 0, 0, err
	}
	elapsed := time.Since(begin)
	var rss int64
	if u, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = u.Maxrss
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return elapsed, cpu, rss, stdout.Len(), nil
}

// buildReference builds the reference revision's plugin as users get it,
// from `git archive` of that revision; "" when there is none to build.
func (b *bench) buildReference() (string, error) {
	if injectReference == "" {
		return "", nil
	}
	dir := filepath.Join(b.work, "reference")
	if err := extractRevision(injectReference, dir); err != nil {
		fmt.Fprintf(os.Stderr, "bench: no reference build (git archive %s: %v)\n", injectReference, err)
		return "", nil
	}
	out := filepath.Join(b.work, "bin", "kubectl-job_signal.reference")
	if err := buildIn(dir, out, "./cmd/kubectl-job_signal"); err != nil {
		return "", fmt.Errorf("build the reference (%s) plugin: %w", injectReference, err)
	}
	return out, nil
}
