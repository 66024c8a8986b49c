package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/job-signal/job-signal/internal/testing/fake"
	"github.com/job-signal/job-signal/signalfs"
)

// stopLatency measures job exit to stop signal: the job's fake records
// the moment before it exits, each sidecar's fake the moment SIGTERM
// arrives; the latency of a run is to the last sidecar's stamp.
func (b *bench) stopLatency(sidecars int, poll bool, runs int) error {
	mode := "inotify"
	if poll {
		mode = "polling (--poll-interval 250ms)"
	}
	title := fmt.Sprintf("stop latency, %d sidecar(s), %s", sidecars, mode)
	var firsts []time.Duration
	samples, err := b.sample(title, runs, func(run int) (time.Duration, error) {
		first, last, err := b.stopOnce(run, sidecars, poll)
		firsts = append(firsts, first)
		return last, err
	})
	if err != nil {
		return err
	}
	r := newRow(title, samples)
	if sidecars > 1 && !poll {
		r.note = fmt.Sprintf("the first of the %d sidecars got its signal after p50 %s, p99 %s; each further one waits for CPU: %d sidecar-watch processes and %d sidecars all wake on %d cores",
			sidecars, human(newRow("", firsts).p50), human(newRow("", firsts).p99), sidecars, sidecars, runtime.NumCPU())
	}
	if floorRow, measured := b.find("stop latency floor"); !poll && sidecars > 1 && measured {
		floor := floorRow.p50
		r.target = "p50 ≤ 5 ms, and ≤ 2× the floor"
		r.check = func(r row) (string, bool) {
			return fmt.Sprintf("p50 %.2f× 5 ms, %.2f× the floor (%s)", ratio(r.p50, 5*time.Millisecond), ratio(r.p50, floor), human(floor)),
				r.p50 <= 5*time.Millisecond && r.p50 <= 2*floor
		}
	} else if !poll {
		r.target = "p50 ≤ 1.3 ms, p99 < 3 ms"
		r.check = func(r row) (string, bool) {
			return fmt.Sprintf("p50 %.2f×, p99 %.2f×", ratio(r.p50, 1300*time.Microsecond), ratio(r.p99, 3*time.Millisecond)),
				r.p50 <= 1300*time.Microsecond && r.p99 < 3*time.Millisecond
		}
		if sidecars == 1 {
			r.reference = "kubexit: p50 2.67 ms, p95 3.74 ms"
		}
	}
	b.rows = append(b.rows, r)
	return nil
}

// stopOnce returns the latency to the first and to the last sidecar.
func (b *bench) stopOnce(run, sidecars int, poll bool) (first, last time.Duration, err error) {
	runDir := filepath.Join(b.work, fmt.Sprintf("stop-%d-%d-%v", sidecars, run, poll))
	stamps := filepath.Join(runDir, "stamps")
	if err := os.MkdirAll(stamps, 0o755); err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(runDir)
	dirPath := filepath.Join(runDir, "signal")
	dir, err := signalfs.Open(dirPath, true)
	if err != nil {
		return 0, 0, err
	}
	common := append([]string{"--dir", dirPath}, quiet...)
	if poll {
		common = append(common, "--poll", "--poll-interval", "250ms")
	}
	var names []string
	var procs []*process
	for i := 0; i < sidecars; i++ {
		name := fmt.Sprintf("s%d", i)
		names = append(names, name)
		// Ready once the fake catches SIGTERM: a sidecar stopped before
		// that would die without stamping.
		ready := filepath.Join(stamps, name+".ready")
		args := append(append([]string{"--name", name, "--ready-file", ready, "--ready-interval", "10ms"}, common...), "--",
			b.path("fake"), "-events", filepath.Join(stamps, name), "-touch", ready, "-on-stop", "exit:0")
		p, err := start(b.path("sidecar-watch"), args...)
		if err != nil {
			return 0, 0, err
		}
		procs = append(procs, p)
	}
	if err := until("sidecars ready", func() bool { return allReady(dir, names) }); err != nil {
		return 0, 0, err
	}
	exitStamp := filepath.Join(stamps, "job-exit")
	job, err := start(b.path("job-signal"), append(common, "--", b.path("fake"), "-events", exitStamp, "-exit", "0")...)
	if err != nil {
		return 0, 0, err
	}
	if err := job.wait(); err != nil {
		return 0, 0, fmt.Errorf("job-signal: %w", err)
	}
	for _, p := range procs {
		if err := p.wait(); err != nil {
			return 0, 0, fmt.Errorf("sidecar-watch: %w", err)
		}
	}
	return spread(stamps, exitStamp, names)
}

// readyGate measures a sidecar's port opening to the job's start: the
// sidecar opens its port after a random start-up time (so the port opens
// at any point of the probe schedule), the job stamps its first moment.
func (b *bench) readyGate(interval string, runs int) error {
	title := "ready gate: port open to job start, --ready-interval " + interval
	samples, err := b.sample(title, runs, func(run int) (time.Duration, error) { return b.readyOnce(run, interval) })
	if err != nil {
		return err
	}
	r := newRow(title, samples)
	r.note = "bounded by the probe schedule: checks 5 ms apart, doubling up to --ready-interval"
	b.rows = append(b.rows, r)
	return nil
}

func (b *bench) readyOnce(run int, interval string) (time.Duration, error) {
	runDir := filepath.Join(b.work, fmt.Sprintf("ready-%s-%d", interval, run))
	defer os.RemoveAll(runDir)
	dirPath := filepath.Join(runDir, "signal")
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return 0, err
	}
	port, err := freePort()
	if err != nil {
		return 0, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	opened, jobStart := filepath.Join(runDir, "opened"), filepath.Join(runDir, "job-start")
	common := append([]string{"--dir", dirPath}, quiet...)
	delay := time.Duration(rand.IntN(300)) * time.Millisecond
	sc, err := start(b.path("sidecar-watch"), append(append([]string{"--name", "proxy", "--ready-tcp", addr, "--ready-interval", interval}, common...),
		"--", b.path("fake"), "-listen", addr, "-ready-delay", delay.String(), "-events", opened, "-on-stop", "exit:0")...)
	if err != nil {
		return 0, err
	}
	job, err := start(b.path("job-signal"), append(append([]string{"--wait-for", "proxy"}, common...),
		"--", b.path("fake"), "-events", jobStart, "-exit", "0")...)
	if err != nil {
		return 0, err
	}
	if err := job.wait(); err != nil {
		return 0, fmt.Errorf("job-signal: %w", err)
	}
	if err := sc.wait(); err != nil {
		return 0, fmt.Errorf("sidecar-watch: %w", err)
	}
	o, err := fake.FirstOf(opened, "ready") // just before the port opens
	if err != nil {
		return 0, err
	}
	s, err := fake.FirstOf(jobStart, "start")
	if err != nil {
		return 0, err
	}
	return s.Sub(o), nil
}
