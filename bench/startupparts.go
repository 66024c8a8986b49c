package main

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// startupInits reads what the Go runtime reports of each package's
// initialisation (GODEBUG=inittrace=1) over starts of argv, and says which
// packages cost most. The trace itself makes internal/godebug's
// initialisation parse a setting, so that package is left out.
func (b *bench) startupInits(argv []string) error {
	fmt.Fprintln(os.Stderr, "bench: start-up, package initialisation")
	const starts = 20
	clock := map[string]time.Duration{}
	var total time.Duration
	for range starts {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("inittrace: %w", err)
		}
		for _, line := range strings.Split(string(out), "\n") {
			// init PKG @T ms, D ms clock, B bytes, A allocs
			f := strings.Fields(line)
			if len(f) < 6 || f[0] != "init" || f[1] == "internal/godebug" {
				continue
			}
			ms, err := strconv.ParseFloat(f[4], 64)
			if err != nil {
				continue
			}
			d := time.Duration(ms * float64(time.Millisecond))
			clock[f[1]] += d
			total += d
		}
	}
	pkgs := slices.SortedFunc(maps.Keys(clock), func(a, b string) int { return cmp.Compare(clock[b], clock[a]) })
	var top []string
	for _, p := range pkgs[:min(6, len(pkgs))] {
		top = append(top, fmt.Sprintf("%s %s", p, human(clock[p]/starts)))
	}
	b.startupInitsText = fmt.Sprintf("Package initialisation (GODEBUG=inittrace=1, mean of %d starts of `job-signal -- true`): %s "+
		"in all, most of it in %s.", starts, human(total/starts), strings.Join(top, ", "))
	return nil
}

// startupInstructions counts the instructions (user space, the process
// alone) of the start-ups with cachegrind, when valgrind is installed:
// unlike time, a count does not depend on what else the machine does.
func (b *bench) startupInstructions(hello string, run func(bin, dir string) []string) error {
	if _, err := exec.LookPath("valgrind"); err != nil {
		fmt.Fprintln(os.Stderr, "bench: no valgrind: start-up instructions not counted")
		return nil
	}
	fmt.Fprintln(os.Stderr, "bench: start-up instructions (cachegrind)")
	type count struct {
		name          string
		after, before []string
	}
	counts := []count{
		{name: "an empty Go program", after: []string{hello}},
		{name: "`job-signal version`", after: []string{b.path("job-signal"), "version"}},
		{name: "`job-signal -- true`", after: run(b.path("job-signal"), "startup")},
	}
	if b.before != "" {
		counts[1].before = []string{b.beforePath("job-signal"), "version"}
		counts[2].before = run(b.beforePath("job-signal"), "startup-before")
	}
	for _, c := range counts {
		after, err := instructions(c.after)
		if err != nil {
			return err
		}
		value := fmt.Sprintf("%.2f M", float64(after)/1e6)
		if c.before != nil {
			before, err := instructions(c.before)
			if err != nil {
				return err
			}
			value += fmt.Sprintf("; at %s %.2f M", b.before, float64(before)/1e6)
		}
		b.rows = append(b.rows, row{name: "start-up instructions (cachegrind): " + c.name, runs: 3, value: value})
	}
	return nil
}

// instructions is the median over three runs of the instructions argv's
// process executes, as valgrind's cachegrind counts them (without
// simulating caches). A run that valgrind fails is tried again.
func instructions(argv []string) (int64, error) {
	var counts []int64
	for tries := 0; len(counts) < 3; tries++ {
		if tries == 6 {
			return 0, fmt.Errorf("cachegrind %s: failed %d times", strings.Join(argv, " "), tries-len(counts))
		}
		cmd := exec.Command("valgrind", append([]string{"--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"}, argv...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			continue
		}
		_, after, found := strings.Cut(string(out), "refs:")
		n, perr := strconv.ParseInt(strings.ReplaceAll(strings.Fields(after + " x")[0], ",", ""), 10, 64)
		if !found || perr != nil {
			return 0, errors.New("cachegrind: no instruction count in its output")
		}
		counts = append(counts, n)
	}
	slices.Sort(counts)
	return counts[1], nil
}

// profileParts are the parts of job-signal's run path named in the
// in-process profile: what each costs per run, as the profile's
// cumulative time of the function that does it.
var profileParts = []struct{ what, function string }{
	{"job.lock", "jobsignal.lockEarly"},
	{"catching signals", "cli.CatchSignalsSoon.func1"},
	{"parsing the command line", "cli.Flags.Scan|cli.newParser|kong.(*Kong).Parse"},
	{"job.state (read once; written at start, when COMMAND starts and when it ends; the success marker written ahead)",
		"jobsignal.(*runner).write|jobsignal.(*runner).reserveSuccess|signalfs.(*Dir).ReadJob"},
	{"fork and exec of COMMAND", "proc.Start"},
}

// startupProfile profiles BenchmarkRunTrue, job-signal's run path from
// Main to its return around `true`, many times in one process (no exec,
// no package initialisation: what is left is the run's own work), and
// says where its CPU time goes.
func (b *bench) startupProfile() error {
	fmt.Fprintln(os.Stderr, "bench: start-up, the run path profiled in process")
	runs := b.runs(3000)
	prof, test := filepath.Join(b.work, "run.prof"), filepath.Join(b.work, "jobsignal.test")
	cmd := exec.Command("go", "test", "-run", "^$", "-bench", "^BenchmarkRunTrue$", "-benchtime", fmt.Sprintf("%dx", runs),
		"-cpuprofile", prof, "-o", test, "./internal/jobsignal")
	cmd.Env = append(os.Environ(), "TMPDIR="+b.work)
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		return fmt.Errorf("BenchmarkRunTrue: %w", err)
	}
	out, err := exec.Command("go", "tool", "pprof", "-top", "-cum", "-nodecount=1000", test, prof).Output()
	if err != nil {
		return fmt.Errorf("pprof: %w", err)
	}
	cum := map[string]time.Duration{}
	var total time.Duration
	for _, line := range strings.Split(string(out), "\n") {
		if _, after, ok := strings.Cut(line, "Total samples = "); ok {
			total, _ = time.ParseDuration(strings.Fields(after)[0])
			continue
		}
		f := strings.Fields(line)
		if len(f) < 6 {
			continue
		}
		if d, err := time.ParseDuration(f[3]); err == nil {
			name := f[5]
			cum[name[strings.LastIndex(name, "/")+1:]] = d
		}
	}
	if total == 0 {
		return errors.New("pprof: no samples")
	}
	var parts []string
	var named time.Duration
	for _, p := range profileParts {
		var d time.Duration
		for _, fn := range strings.Split(p.function, "|") {
			d += cum[fn]
		}
		named += d
		parts = append(parts, fmt.Sprintf("%s %s (%.0f%%)", p.what, human(d/time.Duration(runs)), 100*ratio(d, total)))
	}
	b.startupParts = fmt.Sprintf("In one process, %d runs of the run path (BenchmarkRunTrue, Main around `true`; no exec, no "+
		"package initialisation) take %s of CPU each, all goroutines counted: %s. The rest, %s, is mostly the Go "+
		"scheduler passing the run between threads (the goroutine that waits for COMMAND, the runtime's signal "+
		"thread) and, in process only, letting go of the signals when Main returns.",
		runs, human(total/time.Duration(runs)), strings.Join(parts, ", "), human((total-named)/time.Duration(runs)))
	return nil
}

// startupAnalysis says, with this run's numbers, what job-signal's
// start-up costs over each floor under it.
func (b *bench) startupAnalysis() string {
	get := func(name string) (wall, cpu time.Duration, faults int64, ok bool) {
		l := b.launches[name]
		if l == nil {
			return 0, 0, 0, false
		}
		wall, cpu, faults = l.p50()
		return wall, cpu, faults, true
	}
	plain, _, _, ok1 := get("start-up: `true` alone")
	empty, _, _, ok2 := get("start-up: an empty Go program")
	wrapper, wrapperCPU, wrapperFaults, ok3 := get("start-up: a minimal Go wrapper of `true`")
	version, _, versionFaults, ok4 := get("start-up: `job-signal version`")
	run, runCPU, runFaults, ok5 := get("start-up: `job-signal -- true`")
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
		return ""
	}
	var out strings.Builder
	fmt.Fprintf(&out, "\n## Where the time goes\n\n")
	fmt.Fprintf(&out, "Start-up (p50, fork to reaped, all interleaved): `job-signal -- true` takes %s, %.2f× an empty Go program "+
		"(%s; `true` alone takes %s). A minimal Go wrapper of `true` takes %s (%.2f×): catching six signals, fork, exec "+
		"and wait add %s to the empty program: the floor of any wrapper written in Go, and the target's: job-signal "+
		"takes %.2f× it (target ≤ 2×), adding %s "+
		"(CPU %s → %s, page faults %d → %d): loading its larger binary and initialising its packages, the largest of "+
		"which is kong's (it compiles a regular expression when initialised), then its run: job.lock, parsing the "+
		"command line, job.state written at start, when COMMAND starts and when it ends, and the success marker "+
		"written ahead. `job-signal version` (%s, %d page faults) builds kong's model of the whole command "+
		"line, as the run path does: kong is the one parser. On this machine a page fault costs microseconds: each page of the binary, of "+
		"its data and of the heap touched for the first time is one.\n",
		human(run), ratio(run, empty), human(empty), human(plain), human(wrapper), ratio(wrapper, empty), human(wrapper-empty),
		ratio(run, wrapper), human(run-wrapper),
		human(wrapperCPU), human(runCPU), wrapperFaults, runFaults, human(version), versionFaults)
	if b.before != "" {
		beforeRun, beforeCPU, beforeFaults, ok1 := get("start-up: `job-signal -- true` at " + b.before)
		beforeVersion, _, _, ok2 := get("start-up: `job-signal version` at " + b.before)
		if ok1 && ok2 {
			fmt.Fprintf(&out, "\nAt %s, built in the same run, `job-signal -- true` took %s (%.2f× the empty Go program; CPU %s, "+
				"%d page faults; %.2f× the minimal Go wrapper) and `job-signal version` %s: the run path's start-up moved by %s, "+
				"its CPU by %s and its page faults by %+d.%s\n", b.before, human(beforeRun), ratio(beforeRun, empty), human(beforeCPU), beforeFaults,
				ratio(beforeRun, wrapper), human(beforeVersion), signed(run-beforeRun), signed(runCPU-beforeCPU), runFaults-beforeFaults, b.sizeThen())
		}
	}
	var counts []string
	for _, r := range b.rows {
		if what, ok := strings.CutPrefix(r.name, "start-up instructions (cachegrind): "); ok {
			counts = append(counts, what+" "+r.value)
		}
	}
	if len(counts) > 0 {
		fmt.Fprintf(&out, "\nInstructions executed in user space (cachegrind; unlike time, not moved by other work on the machine): %s.\n",
			strings.Join(counts, ", "))
	}
	if b.startupInitsText != "" {
		fmt.Fprintf(&out, "\n%s\n", b.startupInitsText)
	}
	if b.startupParts != "" {
		fmt.Fprintf(&out, "\n%s\n", b.startupParts)
	}
	return out.String()
}

// signed is human with its sign: +1.20 ms, -300 µs.
func signed(d time.Duration) string {
	if d < 0 {
		return "-" + human(-d)
	}
	return "+" + human(d)
}

// sizeThen compares job-signal's binary with the one built at b.before.
func (b *bench) sizeThen() string {
	now, err1 := os.Stat(b.path("job-signal"))
	then, err2 := os.Stat(b.beforePath("job-signal"))
	if err1 != nil || err2 != nil {
		return ""
	}
	return fmt.Sprintf(" The binary is %.2f MB, and was %.2f MB.", float64(now.Size())/1e6, float64(then.Size())/1e6)
}
