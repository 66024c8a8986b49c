package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/job-signal/job-signal/internal/testing/fake"
	"github.com/job-signal/job-signal/signalfs"
)

// stopFloor measures the best any design could do on this machine: one
// process that learns of the job's exit first hand (it is the job's
// parent, woken by wait4) and signals every sidecar itself. Our 20-sidecar
// stop latency is reported as a ratio to this floor, measured in the same
// run with the same workloads.
func (b *bench) stopFloor(sidecars, runs int) error {
	title := fmt.Sprintf("stop latency floor, %d sidecar(s): one process signals them all", sidecars)
	var firsts []time.Duration
	lasts, err := b.sample(title, runs, func(run int) (time.Duration, error) {
		first, last, err := b.floorOnce(run, sidecars)
		firsts = append(firsts, first)
		return last, err
	})
	if err != nil {
		return err
	}
	r := newRow(title, lasts)
	r.note = fmt.Sprintf("the floor's first sidecar got its signal after p50 %s; the floor is the job's parent and sends %d kill(2) calls", human(newRow("", firsts).p50), sidecars)
	b.rows = append(b.rows, r)
	return nil
}

func (b *bench) floorOnce(run, sidecars int) (first, last time.Duration, err error) {
	stamps := filepath.Join(b.work, fmt.Sprintf("floor-%d", run))
	if err := os.MkdirAll(stamps, 0o755); err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(stamps)
	var procs []*process
	defer func() {
		for _, p := range procs {
			syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		}
	}()
	var names []string
	for i := 0; i < sidecars; i++ {
		name := fmt.Sprintf("s%d", i)
		ready := filepath.Join(stamps, name+".ready")
		p, err := start(b.path("fake"), "-events", filepath.Join(stamps, name), "-touch", ready, "-on-stop", "exit:0")
		if err != nil {
			return 0, 0, err
		}
		procs, names = append(procs, p), append(names, name)
		if err := until("floor sidecar ready", func() bool { _, err := os.Stat(ready); return err == nil }); err != nil {
			return 0, 0, err
		}
	}
	exitStamp := filepath.Join(stamps, "job-exit")
	job, err := start(b.path("fake"), "-events", exitStamp, "-exit", "0")
	if err != nil {
		return 0, 0, err
	}
	if err := job.wait(); err != nil {
		return 0, 0, err
	}
	for _, p := range procs {
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	}
	for _, p := range procs {
		if err := p.wait(); err != nil {
			return 0, 0, err
		}
	}
	procs = nil
	return spread(stamps, exitStamp, names)
}

// spread reads the job's exit and the sidecars' stop events, and
// returns the latency to the first and to the last.
func spread(stamps, exitStamp string, names []string) (first, last time.Duration, err error) {
	exited, err := fake.FirstOf(exitStamp, "exit")
	if err != nil {
		return 0, 0, err
	}
	var firstAt, lastAt time.Time
	for _, name := range names {
		t, err := fake.FirstOf(filepath.Join(stamps, name), "stop")
		if err != nil {
			return 0, 0, err
		}
		if t.After(lastAt) {
			lastAt = t
		}
		if firstAt.IsZero() || t.Before(firstAt) {
			firstAt = t
		}
	}
	return firstAt.Sub(exited), lastAt.Sub(exited), nil
}

// stopChain measures a --stop-after chain: sidecar i stops after sidecar
// i+1, so the last one stops after all the others, one at a time. The
// latency is from the job's exit to the chain's head getting its signal.
func (b *bench) stopChain(sidecars, runs int) error {
	title := fmt.Sprintf("stop chain: %d sidecars, each --stop-after the next", sidecars)
	samples, err := b.sample(title, runs, func(run int) (time.Duration, error) { return b.chainOnce(run, sidecars) })
	if err != nil {
		return err
	}
	r := newRow(title, samples)
	if sidecars == 100 {
		r.target = "≤ 1 s"
		r.check = func(r row) (string, bool) {
			return fmt.Sprintf("p50 %.2f×", ratio(r.p50, time.Second)), r.p50 <= time.Second
		}
	}
	b.rows = append(b.rows, r)
	return nil
}

func (b *bench) chainOnce(run, sidecars int) (time.Duration, error) {
	runDir := filepath.Join(b.work, fmt.Sprintf("chain-%d-%d", sidecars, run))
	stamps := filepath.Join(runDir, "stamps")
	if err := os.MkdirAll(stamps, 0o755); err != nil {
		return 0, err
	}
	defer os.RemoveAll(runDir)
	dirPath := filepath.Join(runDir, "signal")
	dir, err := signalfs.Open(dirPath, true)
	if err != nil {
		return 0, err
	}
	defer dir.Close()
	common := append([]string{"--dir", dirPath, "--stop-after-timeout", "60s"}, quiet...)
	var names []string
	var procs []*process
	for i := 0; i < sidecars; i++ {
		name := fmt.Sprintf("s%d", i)
		ready := filepath.Join(stamps, name+".ready")
		args := append([]string{"--name", name, "--ready-file", ready, "--ready-interval", "10ms"}, common...)
		if i+1 < sidecars {
			args = append(args, "--stop-after", fmt.Sprintf("s%d", i+1))
		}
		args = append(args, "--", b.path("fake"), "-events", filepath.Join(stamps, name), "-touch", ready, "-on-stop", "exit:0")
		p, err := start(b.path("sidecar-watch"), args...)
		if err != nil {
			return 0, err
		}
		procs, names = append(procs, p), append(names, name)
	}
	if err := until("chained sidecars ready", func() bool { return allReady(dir, names) }); err != nil {
		return 0, err
	}
	exitStamp := filepath.Join(stamps, "job-exit")
	jobArgs := append(append([]string{"--dir", dirPath}, quiet...), "--", b.path("fake"), "-events", exitStamp, "-exit", "0")
	job, err := start(b.path("job-signal"), jobArgs...)
	if err != nil {
		return 0, err
	}
	if err := job.wait(); err != nil {
		return 0, fmt.Errorf("job-signal: %w", err)
	}
	for _, p := range procs {
		if err := p.wait(); err != nil {
			return 0, fmt.Errorf("sidecar-watch: %w", err)
		}
	}
	exited, err := fake.FirstOf(exitStamp, "exit")
	if err != nil {
		return 0, err
	}
	head, err := fake.FirstOf(filepath.Join(stamps, "s0"), "stop")
	if err != nil {
		return 0, err
	}
	return head.Sub(exited), nil
}

// startWindow measures how long after its exec a job-signal has made its
// first entry in the directory, job.lock, already locked: a job-signal
// killed (OOM) before that looks as if it never ran, and the sidecars wait
// (bounded by --job-start-timeout or activeDeadlineSeconds). The moment is
// the inotify event of job.lock's creation as this harness receives it,
// so the figure includes the harness's own wake-up.
func (b *bench) startWindow(runs int) error {
	title := "start-up window: exec to job.lock (the first entry)"
	samples, err := b.sample(title, runs, b.windowOnce)
	if err != nil {
		return err
	}
	r := newRow(title, samples)
	r.note = "the window in which an OOM kill of the main container leaves no trace; see README, \"Start-up window\""
	b.rows = append(b.rows, r)
	return nil
}

func (b *bench) windowOnce(run int) (time.Duration, error) {
	dirPath := filepath.Join(b.work, fmt.Sprintf("window-%d", run))
	if err := os.MkdirAll(dirPath, 0o770); err != nil {
		return 0, err
	}
	defer os.RemoveAll(dirPath)
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return 0, err
	}
	defer w.Close()
	if err := w.Add(dirPath); err != nil {
		return 0, err
	}
	begun := time.Now()
	job, err := start(b.path("job-signal"), append(append([]string{"--dir", dirPath}, quiet...), "--", "true")...)
	if err != nil {
		return 0, err
	}
	defer job.wait()
	timeout := time.After(waitLimit)
	for {
		select {
		case ev := <-w.Events:
			if filepath.Base(ev.Name) == signalfs.JobLockFile && ev.Has(fsnotify.Create) {
				return time.Since(begun), nil
			}
			// "#INODE" is the kernel's name for a file made with
			// O_TMPFILE: an event, never an entry.
			if name := filepath.Base(ev.Name); name != signalfs.JobLockFile && !strings.HasPrefix(name, "#") {
				return 0, fmt.Errorf("first entry %s, not job.lock", ev.Name)
			}
		case err := <-w.Errors:
			return 0, err
		case <-timeout:
			return 0, errors.New("no job.lock")
		}
	}
}
