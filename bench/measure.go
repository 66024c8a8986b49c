package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/job-signal/job-signal/internal/fake"
	"github.com/job-signal/job-signal/internal/procfs"
	"github.com/job-signal/job-signal/signalfs"
)

// waitLimit bounds every wait of the harness: a benchmark that hangs is a
// broken product, not a slow one.
const waitLimit = 30 * time.Second

// quiet are the flags that keep the measured programs' logs out of the way.
var quiet = []string{"--log-level", "error", "--termination-log", ""}

// process is one started program.
type process struct {
	cmd  *exec.Cmd
	done chan error
}

func start(name string, args ...string) (*process, error) {
	cmd := exec.Command(name, args...)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	return p, nil
}

func (p *process) wait() error {
	select {
	case err := <-p.done:
		return err
	case <-time.After(waitLimit):
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		return fmt.Errorf("%s did not exit within %s", p.cmd.Path, waitLimit)
	}
}

// until polls check (every millisecond: the harness waits on other
// processes' files) until it is true, or fails after waitLimit.
func until(what string, check func() bool) error {
	deadline := time.Now().Add(waitLimit)
	for !check() {
		if time.Now().After(deadline) {
			return fmt.Errorf("gave up waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

func allReady(dir *signalfs.Dir, names []string) bool {
	for _, n := range names {
		s, found, err := dir.ReadSidecar(n)
		if err != nil || !found || s.Phase != signalfs.SidecarReady {
			return false
		}
	}
	return true
}

// stopLatency measures job exit to stop signal: the job's fake records
// the moment before it exits, each sidecar's fake the moment SIGTERM
// arrives; the latency of a run is to the last sidecar's stamp.
func (b *bench) stopLatency(sidecars int, poll bool, runs int) error {
	mode := "inotify"
	if poll {
		mode = "polling (--poll-interval 250ms)"
	}
	title := fmt.Sprintf("stop latency, %d sidecar(s), %s", sidecars, mode)
	fmt.Fprintln(os.Stderr, "bench:", title)
	var samples, firsts []time.Duration
	for run := 0; run < b.runs(runs); run++ {
		first, last, err := b.stopOnce(run, sidecars, poll)
		if err != nil {
			return fmt.Errorf("%s: %w", title, err)
		}
		samples = append(samples, last)
		firsts = append(firsts, first)
	}
	r := newRow(title, samples)
	if sidecars > 1 && !poll {
		r.note = fmt.Sprintf("the first of the %d sidecars got its signal after p50 %s, p99 %s; each further one waits for CPU: %d sidecar-watch processes and %d sidecars all wake on %d cores",
			sidecars, human(newRow("", firsts).p50), human(newRow("", firsts).p99), sidecars, sidecars, runtime.NumCPU())
	}
	if !poll && sidecars > 1 && b.floor != nil {
		floor := b.floor.p50
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
	fmt.Fprintln(os.Stderr, "bench:", title)
	var samples []time.Duration
	for run := 0; run < b.runs(runs); run++ {
		d, err := b.readyOnce(run, interval)
		if err != nil {
			return fmt.Errorf("%s: %w", title, err)
		}
		samples = append(samples, d)
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

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startup compares `job-signal -- true` with `true`, interleaved so that
// machine noise hits both alike.
func (b *bench) startup() error {
	fmt.Fprintln(os.Stderr, "bench: start-up overhead")
	truePath, err := exec.LookPath("true")
	if err != nil {
		return err
	}
	dirPath := filepath.Join(b.work, "startup")
	var plain, wrapped []time.Duration
	timeRun := func(name string, args ...string) (time.Duration, error) {
		t0 := time.Now()
		cmd := exec.Command(name, args...)
		cmd.Stderr = os.Stderr
		err := cmd.Run()
		return time.Since(t0), err
	}
	for i := 0; i < b.runs(400); i++ {
		d, err := timeRun(truePath)
		if err != nil {
			return err
		}
		plain = append(plain, d)
		d, err = timeRun(b.path("job-signal"), append(append([]string{"--dir", dirPath}, quiet...), "--", truePath)...)
		if err != nil {
			return fmt.Errorf("job-signal -- true: %w", err)
		}
		wrapped = append(wrapped, d)
	}
	hello, err := b.helloWorld()
	if err != nil {
		return err
	}
	var goOnly, parseOnly []time.Duration
	for i := 0; i < b.runs(200); i++ {
		d, err := timeRun(hello)
		if err != nil {
			return err
		}
		goOnly = append(goOnly, d)
		d, err = timeRun(b.path("job-signal"), "version")
		if err != nil {
			return err
		}
		parseOnly = append(parseOnly, d)
	}
	p := newRow("start-up: `true` alone", plain)
	p.reference = "kubexit: 0.8 ms"
	g := newRow("start-up: an empty Go program", goOnly)
	g.note = "the floor for any Go wrapper on this machine: runtime start-up and exit"
	v := newRow("start-up: `job-signal version`", parseOnly)
	v.note = "adds loading job-signal's 4 MB and its packages' initialisation, and kong building its model of the command line"
	w := newRow("start-up: `job-signal -- true`", wrapped)
	w.reference = "kubexit: 11.7 ms"
	overhead := w.p50 - p.p50
	w.target = "overhead < 3 ms"
	w.check = func(row) (string, bool) {
		return fmt.Sprintf("overhead %.2f ms (%.2f×)", ms(overhead), ratio(overhead, 3*time.Millisecond)), overhead < 3*time.Millisecond
	}
	w.note = "adds catching signals, the lock, reading and writing job.state three times, fork and exec of `true`, waiting for it"
	b.rows = append(b.rows, p, g, v, w)
	return nil
}

// helloWorld builds the smallest Go program, the floor of any Go wrapper's
// start-up cost.
func (b *bench) helloWorld() (string, error) {
	dir := filepath.Join(b.work, "hello")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module hello\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
	out := filepath.Join(b.bin, "hello")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return out, cmd.Run()
}

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

func isExit(err error, code int) bool {
	var exit *exec.ExitError
	return errors.As(err, &exit) && exit.ExitCode() == code
}

type procStat struct {
	ticks, switches int
	rssKiB          int
}

// readProcStat sums utime+stime (/proc/PID/stat) and the context switches
// of every thread, and reads VmRSS.
func readProcStat(pid int) procStat {
	var ps procStat
	if st, err := procfs.ReadStat(pid); err == nil {
		ps.ticks = int(st.UTime + st.STime)
	}
	ps.switches = procfs.ContextSwitches(pid)
	ps.rssKiB, _ = procfs.StatusValue(pid, "VmRSS")
	return ps
}

func (b *bench) sizes() error {
	const limit = 6.6e6
	for _, prog := range []string{"job-signal", "sidecar-watch"} {
		info, err := os.Stat(b.path(prog))
		if err != nil {
			return err
		}
		size := info.Size()
		b.rows = append(b.rows, row{name: "binary size: " + prog + " (stripped, static)", runs: 1,
			value: fmt.Sprintf("%.2f MB", float64(size)/1e6), target: "< 6.6 MB", reference: "kubexit: 26.6 MB",
			check: func(row) (string, bool) { return fmt.Sprintf("%.2f×", float64(size)/limit), float64(size) < limit }})
	}
	return nil
}

// cluster runs the e2e suite's side-by-side timing on its one-node
// cluster: the same one-sidecar Job wrapped by job-signal or with a native
// sidecar, in turns, judged by the real Job controller.
func (b *bench) cluster() error {
	rounds := b.runs(10)
	output, err := b.e2eTest("Job completion on a real cluster", fmt.Sprintf("%d rounds each", rounds),
		"TestJobCompletionOursVsNative", fmt.Sprintf("E2E_TIMING_ROUNDS=%d", rounds))
	if err != nil || output == nil {
		return err
	}
	for _, m := range []struct{ key, what, reference string }{
		{"main_exit_to_Succeeded", "main exit to Pod Succeeded", "native on kubelet 1.34: 3.8–3.9 s"},
		{"main_exit_to_Complete", "main exit to Job Complete", "native on kubelet 1.34: 4.8–4.9 s"},
		{"create_to_Complete", "Job creation to Complete", ""},
	} {
		re := regexp.MustCompile(`compare ` + m.key + ` .*ours_ms=\[([0-9 ]+)\] native_ms=\[([0-9 ]+)\]`)
		found := re.FindSubmatch(output)
		if found == nil {
			os.Stderr.Write(output)
			return fmt.Errorf("e2e timing: no E2E_TIMING compare line for %s", m.key)
		}
		o := newRow("cluster: "+m.what+", job-signal", parseDurations(string(found[1]), time.Millisecond))
		n := newRow("cluster: "+m.what+", native sidecar", parseDurations(string(found[2]), time.Millisecond))
		n.reference = m.reference
		if m.key == "main_exit_to_Complete" {
			o.target = "one kubelet relist (1 s) less than native"
			o.check = func(row) (string, bool) {
				saved := n.p50 - o.p50
				return fmt.Sprintf("%s less than native (p50)", human(saved)), saved >= 800*time.Millisecond
			}
		}
		b.rows = append(b.rows, o, n)
	}
	return nil
}

// parseDurations reads numbers separated by spaces, in unit.
func parseDurations(s string, unit time.Duration) []time.Duration {
	var out []time.Duration
	for _, f := range strings.Fields(s) {
		n, _ := strconv.Atoi(f)
		out = append(out, time.Duration(n)*unit)
	}
	return out
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

// row is one line of the table.
type row struct {
	name      string
	runs      int
	p50, p99  time.Duration
	value     string // instead of p50/p99
	target    string
	reference string
	note      string
	check     func(row) (string, bool)
}

func newRow(name string, samples []time.Duration) row {
	sorted := append([]time.Duration(nil), samples...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	return row{name: name, runs: len(sorted), p50: percentile(sorted, 50), p99: percentile(sorted, 99)}
}

// percentile by nearest rank on sorted samples.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100
	return sorted[max(rank, 1)-1]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }
