//go:build soak

package soak

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/job-signal/job-signal/internal/procfs"
	"github.com/job-signal/job-signal/internal/testing/procinfo"
)

// config is read from the environment (see README.md).
type config struct {
	lifecycles int
	seed       uint64
	parallel   int
	keep       bool // keep every lifecycle's files, not only failed ones
	// canMount: the soak runs as root in a mount namespace of its own
	// (TestMain), where the full-directory lifecycles mount their tmpfs.
	canMount bool
	// product, if set, is a directory with the job-signal and
	// sidecar-watch to soak instead of those built from ./cmd (an older
	// build, to show that the soak finds what it fixed).
	product string
}

// inMountNS is set in the soak's environment once TestMain has re-run it
// in a mount namespace of its own.
const inMountNS = "JOB_SIGNAL_SOAK_MOUNT_NS"

// TestMain re-runs the soak, as root, in a private mount namespace
// (unshare execs it in place: same PID, same output), so that the tmpfs
// mounts of the full-directory lifecycles are nobody else's business and
// vanish with the soak, whatever becomes of it.
func TestMain(m *testing.M) {
	if os.Getuid() == 0 && os.Getenv(inMountNS) == "" {
		if unshare, err := exec.LookPath("unshare"); err == nil {
			args := append([]string{"unshare", "--mount", "--propagation", "private", "--"}, os.Args...)
			err := syscall.Exec(unshare, args, append(os.Environ(), inMountNS+"=1"))
			fmt.Fprintf(os.Stderr, "soak: cannot re-run in a mount namespace of its own (%v): no full-directory lifecycles\n", err)
		}
	}
	os.Exit(m.Run())
}

func readConfig(t *testing.T) config {
	c := config{lifecycles: 500, seed: rand.Uint64() >> 1, parallel: 4}
	for _, v := range []struct {
		env string
		set func(string) error
	}{
		{"SOAK_LIFECYCLES", func(s string) (err error) { c.lifecycles, err = strconv.Atoi(s); return }},
		{"SOAK_SEED", func(s string) (err error) { c.seed, err = strconv.ParseUint(s, 10, 64); return }},
		{"SOAK_PARALLEL", func(s string) (err error) { c.parallel, err = strconv.Atoi(s); return }},
	} {
		if s := os.Getenv(v.env); s != "" {
			if err := v.set(s); err != nil {
				t.Fatalf("%s=%q: %v", v.env, s, err)
			}
		}
	}
	c.keep = os.Getenv("SOAK_KEEP") != ""
	if c.product = os.Getenv("SOAK_PRODUCT"); c.product != "" && !filepath.IsAbs(c.product) {
		t.Fatalf("SOAK_PRODUCT=%q: give an absolute directory", c.product)
	}
	c.canMount = os.Getuid() == 0 && os.Getenv(inMountNS) == "1"
	if c.lifecycles < 1 || c.parallel < 1 {
		t.Fatalf("SOAK_LIFECYCLES and SOAK_PARALLEL must be at least 1")
	}
	return c
}

// TestSoak runs many random lifecycles of job-signal and its sidecars with
// faults injected, and checks each (see README.md for what and why).
func TestSoak(t *testing.T) {
	cfg := readConfig(t)
	t.Logf("soak: seed %d, %d lifecycles, %d at a time; replay all with SOAK_SEED=%d SOAK_LIFECYCLES=%d",
		cfg.seed, cfg.lifecycles, cfg.parallel, cfg.seed, cfg.lifecycles)
	if !cfg.canMount {
		t.Logf("soak: not root in a mount namespace of its own: no %q lifecycles (the same seed draws other scenarios as root)", kindFull)
	}
	tmp, err := os.MkdirTemp("", "job-signal-soak-")
	if err != nil {
		t.Fatal(err)
	}
	bins := build(t, tmp, cfg.product)

	begun := time.Now()
	outcomes := make([]*outcome, cfg.lifecycles)
	scenarios := make([]*scenario, cfg.lifecycles)
	next := make(chan int)
	var workers sync.WaitGroup
	var progress sync.Mutex
	finished := 0
	for range cfg.parallel {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for i := range next {
				// Lifecycle i's seed is seed+i: SOAK_SEED=that replays it
				// alone as lifecycle 0.
				sc := newScenario(i, cfg.seed+uint64(i), cfg.canMount)
				scenarios[i], outcomes[i] = sc, runOne(t, sc, bins, tmp, cfg.keep)
				progress.Lock()
				finished++
				if finished%50 == 0 {
					t.Logf("soak: %d/%d lifecycles after %s", finished, cfg.lifecycles, time.Since(begun).Round(time.Second))
				}
				progress.Unlock()
			}
		}()
	}
	for i := range cfg.lifecycles {
		next <- i
	}
	close(next)
	workers.Wait()
	wall := time.Since(begun)

	leftovers := finalChecks(tmp)
	for _, l := range leftovers {
		t.Error(l)
	}
	failed := summarize(t, cfg, scenarios, outcomes, wall)
	if failed == 0 && len(leftovers) == 0 && !cfg.keep {
		os.RemoveAll(tmp)
	} else {
		t.Logf("soak: kept the lifecycles' files in %s", tmp)
	}
}

// build compiles the pair from ./cmd (static, as the image ships them),
// unless product names a directory that has them, and the fake workload
// into dir.
func build(t *testing.T, dir, product string) binaries {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	bin := filepath.Join(dir, "bin")
	builds := [][]string{{"build", "-trimpath", "-o", filepath.Join(bin, "fake"), "./internal/testing/fake/cmd/fake"}}
	if product == "" {
		builds = append(builds, []string{"build", "-trimpath", "-o", bin + "/", "./cmd/job-signal", "./cmd/sidecar-watch"})
		product = bin
	}
	for _, args := range builds {
		cmd := exec.Command("go", args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return binaries{
		jobSignal:    filepath.Join(product, "job-signal"),
		sidecarWatch: filepath.Join(product, "sidecar-watch"),
		fake:         filepath.Join(bin, "fake"),
	}
}

// runOne runs and checks one lifecycle, reports its failures with
// everything needed to understand them, and removes its files if it passed.
func runOne(t *testing.T, sc *scenario, bins binaries, tmp string, keep bool) *outcome {
	root := filepath.Join(tmp, fmt.Sprintf("lifecycle-%04d", sc.Index))
	l := newLifecycle(sc, bins, root)
	// After the report, which lists --dir's files.
	defer l.unmount()
	if err := l.run(); err != nil {
		o := &outcome{}
		o.failf("harness: %v", err)
		t.Errorf("soak: lifecycle %d failed:\n%s", sc.Index, l.report(o))
		return o
	}
	o := l.check()
	if len(o.failures) > 0 {
		report := l.report(o)
		os.WriteFile(filepath.Join(root, "report.txt"), []byte(report), 0o644)
		t.Errorf("soak: lifecycle %d failed:\n%s", sc.Index, report)
		return o
	}
	l.unmount()
	if !keep {
		os.RemoveAll(root)
	}
	return o
}

// finalChecks: after every lifecycle, the soak has no child left (alive or
// zombie: every process it started was reaped) and nothing runs from its
// directory.
func finalChecks(tmp string) []string {
	var problems []string
	for _, st := range procfs.Children(os.Getpid()) {
		problems = append(problems, "soak: child of the test process left at the end: "+procinfo.Describe(st.PID)+fmt.Sprintf(" (state %c)", st.State))
	}
	for _, st := range procinfo.Matching(tmp) {
		problems = append(problems, "soak: process left running at the end: "+procinfo.Describe(st.PID))
		killAndWait(st)
	}
	return problems
}

// summarize prints the numbers and returns how many lifecycles failed.
func summarize(t *testing.T, cfg config, scenarios []*scenario, outcomes []*outcome, wall time.Duration) int {
	byKind := map[string]int{}
	var sidecars, runs, grandchildren, failed int
	var first, last, exited []time.Duration
	notes := map[string]int{}
	slowest := -1
	for i, o := range outcomes {
		byKind[scenarios[i].Kind]++
		sidecars += o.sidecarsStarted
		runs += o.sidecarRuns
		grandchildren += o.grandchildren
		if len(o.failures) > 0 {
			failed++
		}
		if o.hasStop {
			first = append(first, o.firstStop)
			last = append(last, o.lastStop)
		}
		if o.hasAllExited {
			exited = append(exited, o.allExited)
			if slowest < 0 || o.allExited > outcomes[slowest].allExited {
				slowest = i
			}
		}
		for _, n := range o.notes {
			notes[noteKind(n)]++
		}
	}
	var kindList []string
	for _, k := range kinds {
		kindList = append(kindList, fmt.Sprintf("%s %d", k.name, byKind[k.name]))
	}
	t.Logf("soak summary: %d lifecycles (%s), %d sidecars started (%d sidecar runs with restarts, %d grandchildren), %d failures, wall time %s, seed %d",
		len(outcomes), strings.Join(kindList, ", "), sidecars, runs, grandchildren, failed, wall.Round(time.Second), cfg.seed)
	t.Logf("soak summary: job exit to last sidecar's stop signal (n=%d): %s; to first: %s",
		len(last), percentiles(last), percentiles(first))
	t.Logf("soak summary: job exit to last sidecar-watch exit (n=%d): %s", len(exited), percentiles(exited))
	if slowest >= 0 {
		t.Logf("soak summary: slowest to stop its sidecars: lifecycle %d (%s, SOAK_SEED=%d SOAK_LIFECYCLES=1)",
			slowest, outcomes[slowest].allExited.Round(time.Millisecond), scenarios[slowest].Seed)
	}
	summarizeFaults(t, scenarios, outcomes)
	var noteList []string
	for n, count := range notes {
		noteList = append(noteList, fmt.Sprintf("%d × %s", count, n))
	}
	sort.Strings(noteList)
	if len(noteList) > 0 {
		t.Logf("soak summary: tolerated races: %s", strings.Join(noteList, "; "))
	}
	for i, o := range outcomes {
		for _, n := range o.notes {
			t.Logf("soak: lifecycle %d (SOAK_SEED=%d): %s", i, scenarios[i].Seed, n)
		}
	}
	return failed
}

// noteKind is what a note says without its particulars (after ": "), so
// that notes can be counted.
func noteKind(note string) string {
	kind, _, _ := strings.Cut(note, ": ")
	return kind
}

// percentiles formats p50, p99 and max by the nearest-rank method.
func percentiles(d []time.Duration) string {
	if len(d) == 0 {
		return "none"
	}
	d = slices.Clone(d)
	slices.Sort(d)
	rank := func(p float64) time.Duration {
		i := int(p*float64(len(d))+0.999999) - 1
		return d[max(0, min(i, len(d)-1))]
	}
	r := func(x time.Duration) string { return x.Round(100 * time.Microsecond).String() }
	return fmt.Sprintf("p50 %s, p99 %s, max %s", r(rank(0.50)), r(rank(0.99)), r(d[len(d)-1]))
}
