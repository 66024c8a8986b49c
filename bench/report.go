package main

import (
	"fmt"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"
)

type report struct{ table, markdown string }

func (r row) measured() string {
	if r.value != "" {
		return r.value
	}
	return fmt.Sprintf("p50 %s, p99 %s", human(r.p50), human(r.p99))
}

func (r row) verdict() string {
	if r.check == nil {
		return ""
	}
	text, ok := r.check(r)
	if ok {
		return text + " — met"
	}
	return text + " — MISSED"
}

func human(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	case d < time.Second:
		return fmt.Sprintf("%.2f ms", ms(d))
	default:
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
}

func (b *bench) report(took time.Duration, micro string) report {
	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MEASUREMENT\tRUNS\tRESULT\tTARGET\tVS TARGET\tREFERENCE")
	for _, r := range b.rows {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", r.name, r.runs, r.measured(), r.target, r.verdict(), r.reference)
	}
	tw.Flush()

	var md strings.Builder
	fmt.Fprintf(&md, "# Benchmarks\n\n")
	fmt.Fprintf(&md, "Written by `make bench` on %s, in %s.\n\n", time.Now().UTC().Format("2006-01-02 15:04 MST"), took.Round(time.Second))
	fmt.Fprintf(&md, "Machine: %s.\n\n", machine())
	md.WriteString("| measurement | runs | result | target | vs target | reference |\n|---|---|---|---|---|---|\n")
	for _, r := range b.rows {
		fmt.Fprintf(&md, "| %s | %d | %s | %s | %s | %s |\n", r.name, r.runs, r.measured(), r.target, r.verdict(), r.reference)
	}
	md.WriteString(b.analysis())
	md.WriteString(method)
	for _, r := range b.rows {
		if r.note != "" {
			fmt.Fprintf(&md, "- %s: %s.\n", r.name, r.note)
		}
	}
	fmt.Fprintf(&md, "\n## Protocol micro-benchmarks\n\n`go test -bench . -benchmem ./signalfs` on the same run's temporary directory:\n\n```\n%s\n```\n", micro)
	return report{table: table.String(), markdown: md.String()}
}

const method = `
## Method

- Binaries are built as released: ` + "`CGO_ENABLED=0 go build -trimpath -ldflags '-s -w'`" + `.
- The shared directory is on /dev/shm, a tmpfs like an emptyDir with ` + "`medium: Memory`" + `.
- Moments are stamped inside the processes (the fake workload, internal/testing/fake, records Unix nanoseconds in a
  file): the job's fake just before it exits, each sidecar's fake when SIGTERM arrives, the sidecar's fake just
  before it opens its port, the job's fake when it starts. The harness only starts processes and waits for them.
- Stop latency: sidecars are started and ready before the job starts; the run's latency is from the job's exit
  to the last sidecar's SIGTERM. Each run uses a fresh directory and fresh processes.
- Stop latency to the sidecar's exit: one sidecar-watch around a real program, stopped its own way (the Cloud SQL
  Auth Proxy through its /quitquitquit, nginx with QUIT, its graceful stop), next to ` + "`sleep`" + ` stopped with TERM;
  from the job's fake's stamp before it exits to the moment the sidecar's process has exited (the harness holds a
  pidfd of it and stamps when it turns readable), so the program's own shutdown counts. The proxy is the one make
  e2e builds into its cache (or one in PATH), offline with a dummy token; nginx is Debian's nginx-light. A row says
  it was skipped when its program is missing.
- Stop latency floor: the same 20 sidecar workloads and job, without sidecar-watch or job-signal: the harness is
  the job's parent, learns of its exit from wait4 and sends SIGTERM to the 20 itself. Nothing can stop 20
  sidecars faster on this machine; the 20-sidecar row is judged against it, measured in the same run.
- Stop chain: N sidecar-watches, sidecar i with --stop-after sidecar i+1; from the job's exit to the first
  sidecar's SIGTERM, which comes after all the others have stopped, one after another.
- Start-up window: a fresh directory watched with inotify; from just before the harness starts job-signal to
  the creation of job.lock as the harness receives it (so it includes the harness's own wake-up).
- Ready gate: the sidecar opens its port after a random 0–300 ms start-up, so the opening falls anywhere in the
  probe schedule; the latency is to the job's first moment.
- Start-up: wall time from fork to reaped, CPU time and minor page faults (getrusage of the reaped process, its
  reaped children included) of ` + "`true`" + `, an empty Go program, a minimal Go wrapper of ` + "`true`" + ` (bench/startup.go),
  ` + "`job-signal version`" + ` and ` + "`job-signal --dir D -- true`" + `, interleaved run by run; with -before REV also the
  last two as built at REV. Instructions: valgrind's cachegrind without cache simulation, the median of three
  runs. Package initialisation: GODEBUG=inittrace=1. The run path's CPU by part: a CPU profile of
  BenchmarkRunTrue (internal/jobsignal), job-signal's Main around ` + "`true`" + ` many times in one process.
- Idle: a sidecar-watch and a job-signal around a running job, measured over 10 s after 1 s to settle: CPU ticks
  (utime+stime, 10 ms units), context switches of all threads, VmRSS.
- Inject: ` + "`kubectl-job_signal inject --offline -f FILE`" + ` as a process, stdout kept in memory, on a file of one and of
  1,000 Jobs (each a main container and a classic sidecar with commands, a comment and a wait-for annotation).
- Cluster: the e2e suite's TestJobCompletionOursVsNative (see e2e/README.md) on a one-node cluster (etcd, API
  server, controller manager, scheduler, kubelet) of each pinned Kubernetes version, one after the other: the same
  main (2 s and a random part of a second) with one sidecar wrapped by job-signal, with a native sidecar (where
  the cluster has them), alone, and alone in the wrapped Job's layout (after its install init container), in
  turns; from the main container's exit (the runtime's nanosecond timestamp, through the CRI) to the watch
  delivering the Pod's Succeeded phase and the Job's Complete condition, and from just before the Job's create
  request to the latter. The oldest version runs with the feature gate SidecarContainers=false: a cluster
  without native sidecars.
- Webhook: the e2e suite's TestWebhookLatency (see e2e/README.md) on the same kind of cluster: job-signal-webhook
  as a process on 127.0.0.1, registered with manifests/webhook/webhook.yaml's configuration (by URL), distribution's
  registry on 127.0.0.1; Pods created one at a time through the API, the four kinds in turns, each held by a
  scheduling gate so that only admission counts. Creation: the client's create request, from before sending to the
  answer. Handling: the webhook's own time from reading a request to writing its answer (its debug log), summed over
  the two calls each injected Pod gets.
- Percentiles are nearest-rank; with fewer than 100 runs p99 is the slowest run.
- Reference figures (kubexit, native sidecars) were measured on this kind of machine and are quoted from the issue.
`

// analysis explains, with this run's numbers, where the time goes for the
// targets that are missed.
func (b *bench) analysis() string {
	var out strings.Builder
	out.WriteString(b.startupAnalysis())
	one, ok1 := b.find("stop latency, 1 sidecar(s), inotify")
	twenty, ok2 := b.find("stop latency, 20 sidecar(s), inotify")
	floor, ok3 := b.find("stop latency floor")
	if ok1 && ok2 && ok3 {
		fmt.Fprintf(&out, "\nStop latency: one sidecar gets its signal after %s (p50). With 20, the last gets it after %s, %.2f× the "+
			"floor (%s), where one process signals all 20 itself. The floor is 20 sidecar processes waking on %d cores; "+
			"with job-signal, 20 sidecar-watch processes wake too, each reads job.state once and signals its sidecar before "+
			"anything else (it then stops listening, and records and logs afterwards), so each sidecar costs two process "+
			"wake-ups instead of one. In a Pod each container has its own CPU share.\n",
			human(one.p50), human(twenty.p50), ratio(twenty.p50, floor.p50), human(floor.p50), runtime.NumCPU())
	}
	if chain, ok := b.find("stop chain: 100"); ok {
		fmt.Fprintf(&out, "\nStop chain: 100 sidecars, each stopping after the next, take %s (p50), about %s a link. A sidecar waiting "+
			"for --stop-after sidecars waits on their locks, which they release when they exit, not on the directory: "+
			"no sidecar-watch wakes for another's writes, so the chain costs one wake-up per link.\n", human(chain.p50), human(chain.p50/100))
	}
	out.WriteString(b.clusterAnalysis())
	out.WriteString(b.slowStopAnalysis())
	out.WriteString(b.webhookAnalysis())
	out.WriteString(b.webhookJobsAnalysis())
	out.WriteString(b.webhookScaleAnalysis())
	return out.String()
}
