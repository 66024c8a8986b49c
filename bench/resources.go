package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/job-signal/job-signal/signalfs"
)

// idle measures what a sidecar-watch costs while its job runs: CPU ticks
// (the kernel's clock ticks, 10 ms each) and context switches of all its
// threads over ten seconds, and its resident memory. job-signal, idle
// around its running command, is measured alongside.
func (b *bench) idle() error {
	const window = 10 * time.Second
	for _, poll := range []bool{false, true} {
		mode := "inotify"
		if poll {
			mode = "polling 250ms"
		}
		fmt.Fprintln(os.Stderr, "bench: idle cost,", mode)
		runDir := filepath.Join(b.work, "idle-"+mode[:4])
		dirPath := filepath.Join(runDir, "signal")
		dir, err := signalfs.Open(dirPath, true)
		if err != nil {
			return err
		}
		common := append([]string{"--dir", dirPath}, quiet...)
		if poll {
			common = append(common, "--poll", "--poll-interval", "250ms")
		}
		sc, err := start(b.path("sidecar-watch"), append(append([]string{"--name", "idle"}, common...), "--", b.path("fake"))...)
		if err != nil {
			return err
		}
		// The job: a fake that waits for SIGTERM.
		job, err := start(b.path("job-signal"), append(common, "--", b.path("fake"))...)
		if err != nil {
			return err
		}
		if err := until("job running and sidecar ready", func() bool {
			s, found, _ := dir.ReadJob()
			return found && s.Phase == signalfs.JobRunning && allReady(dir, []string{"idle"})
		}); err != nil {
			return err
		}
		// Let start-up settle (GC, the first lock wait) before the window.
		time.Sleep(time.Second)
		before := []procStat{readProcStat(sc.cmd.Process.Pid), readProcStat(job.cmd.Process.Pid)}
		time.Sleep(window)
		after := []procStat{readProcStat(sc.cmd.Process.Pid), readProcStat(job.cmd.Process.Pid)}
		for i, who := range []string{"sidecar-watch", "job-signal"} {
			ticks := after[i].ticks - before[i].ticks
			switches := after[i].switches - before[i].switches
			r := row{name: fmt.Sprintf("idle %s (%s), 10 s", who, mode), runs: 1,
				value: fmt.Sprintf("%d CPU ticks, %d context switches, RSS %.1f MiB", ticks, switches, float64(after[i].rssKiB)/1024)}
			if who == "sidecar-watch" && !poll {
				r.target = "0 ticks, RSS < 10 MiB"
				r.reference = "kubexit: RSS 19.7 MB"
				rss := after[i].rssKiB
				r.check = func(row) (string, bool) {
					return fmt.Sprintf("RSS %.2f×", float64(rss)/(10*1024)), ticks == 0 && rss < 10*1024
				}
			}
			b.rows = append(b.rows, r)
		}
		job.cmd.Process.Signal(syscall.SIGTERM)
		if err := job.wait(); err != nil && !isExit(err, 143) {
			return fmt.Errorf("idle job: %w", err)
		}
		if err := sc.wait(); err != nil {
			return fmt.Errorf("idle sidecar-watch: %w", err)
		}
		os.RemoveAll(runDir)
	}
	return nil
}

func (b *bench) sizes() error {
	const limit = 6.6e6
	for _, prog := range []string{"job-signal", "sidecar-watch", "kubectl-job_signal", "job-signal-webhook"} {
		info, err := os.Stat(b.path(prog))
		if err != nil {
			return err
		}
		size := info.Size()
		r := row{name: "binary size: " + prog + " (stripped, static)", runs: 1, value: fmt.Sprintf("%.2f MB", float64(size)/1e6)}
		if prog == "job-signal" || prog == "sidecar-watch" {
			// Copied into every Pod.
			r.target, r.reference = "< 6.6 MB", "kubexit: 26.6 MB"
			r.check = func(row) (string, bool) { return fmt.Sprintf("%.2f×", float64(size)/limit), float64(size) < limit }
		} else {
			r.note = "a program of its own, never copied into Pods (client-go, kyaml, go-containerregistry)"
		}
		b.rows = append(b.rows, r)
	}
	return nil
}

// micro runs the Go benchmarks of the protocol package.
func (b *bench) micro() (string, error) {
	fmt.Fprintln(os.Stderr, "bench: go test -bench ./signalfs")
	cmd := exec.Command("go", "test", "-run", "^$", "-bench", ".", "-benchmem", "-count", "1", "./signalfs")
	cmd.Env = append(os.Environ(), "TMPDIR="+b.work)
	out, err := cmd.CombinedOutput()
	if err != nil {
		os.Stderr.Write(out)
		return "", err
	}
	var keep []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "Benchmark") {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n"), nil
}
