package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// launch is one program the start-up comparison runs, again and again.
type launch struct {
	name string
	argv []string
	wall []time.Duration // fork to reaped, as the harness sees it
	cpu  []time.Duration // user and system time, its reaped children's included
	// faults are its minor page faults (and its reaped children's): mostly
	// the first touch of each page of its binary, data and heap.
	faults []int64
}

func (l *launch) once() error {
	t0 := time.Now()
	cmd := exec.Command(l.argv[0], l.argv[1:]...)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w", strings.Join(l.argv, " "), err)
	}
	l.wall = append(l.wall, time.Since(t0))
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	l.cpu = append(l.cpu, time.Duration(syscall.TimevalToNsec(ru.Utime)+syscall.TimevalToNsec(ru.Stime)))
	l.faults = append(l.faults, ru.Minflt)
	return nil
}

func (l *launch) row() row {
	r := newRow(l.name, l.wall)
	cpu := newRow("", l.cpu)
	faults := slices.Sorted(slices.Values(l.faults))
	r.value = fmt.Sprintf("p50 %s, p99 %s; CPU %s, %d page faults (p50)", human(r.p50), human(r.p99), human(cpu.p50), faults[len(faults)/2])
	return r
}

// startup times job-signal's start-up against what lies under it, all
// interleaved so that machine noise hits each alike: `true` itself, an
// empty Go program (the Go runtime's start and exit), a minimal Go
// wrapper (catching the signals job-signal forwards, fork, exec and wait
// for `true`: what any wrapper written in Go does), `job-signal version`
// (loading job-signal, initialising its packages, kong's parse) and
// `job-signal -- true`; with -before, the last two also as built at that
// revision.
func (b *bench) startup() error {
	fmt.Fprintln(os.Stderr, "bench: start-up")
	truePath, err := exec.LookPath("true")
	if err != nil {
		return err
	}
	hello, err := b.goProgram("hello", helloSource)
	if err != nil {
		return err
	}
	wrapper, err := b.goProgram("wrapper", wrapperSource)
	if err != nil {
		return err
	}
	run := func(bin, dir string) []string {
		return append(append([]string{bin, "--dir", filepath.Join(b.work, dir)}, quiet...), "--", truePath)
	}
	launches := []*launch{
		{name: "start-up: `true` alone", argv: []string{truePath}},
		{name: "start-up: an empty Go program", argv: []string{hello}},
		{name: "start-up: a minimal Go wrapper of `true`", argv: []string{wrapper, truePath}},
	}
	if b.before != "" {
		launches = append(launches,
			&launch{name: "start-up: `job-signal version` at " + b.before, argv: []string{b.beforePath("job-signal"), "version"}},
			&launch{name: "start-up: `job-signal -- true` at " + b.before, argv: run(b.beforePath("job-signal"), "startup-before")})
	}
	launches = append(launches,
		&launch{name: "start-up: `job-signal version`", argv: []string{b.path("job-signal"), "version"}},
		&launch{name: "start-up: `job-signal -- true`", argv: run(b.path("job-signal"), "startup")})
	for range b.runs(400) {
		for _, l := range launches {
			if err := l.once(); err != nil {
				return err
			}
		}
	}
	rows := make([]row, len(launches))
	b.launches = map[string]*launch{}
	for i, l := range launches {
		rows[i] = l.row()
		b.launches[l.name] = l
	}
	rows[0].reference = "kubexit: 0.8 ms"
	rows[1].note = "the floor of any Go program on this machine: the runtime's start and exit"
	rows[2].note = "the floor of any wrapper written in Go: it catches the six signals job-signal forwards, forks and execs `true` in a process group of its own, and waits for it"
	floor, wrapped := rows[2], &rows[len(rows)-1]
	wrapped.reference = "kubexit: 11.7 ms"
	wrapped.target = "≤ 2× the minimal Go wrapper"
	wrapped.check = func(r row) (string, bool) {
		return fmt.Sprintf("%.2f× the minimal Go wrapper (%s)", ratio(r.p50, floor.p50), human(floor.p50)), r.p50 <= 2*floor.p50
	}
	b.rows = append(b.rows, rows...)
	if err := b.startupInstructions(hello, run); err != nil {
		return err
	}
	if err := b.startupInits(run(b.path("job-signal"), "startup")); err != nil {
		return err
	}
	return b.startupProfile()
}

// goProgram builds source, a main package of the standard library only,
// as the binaries are built.
func (b *bench) goProgram(name, source string) (string, error) {
	dir := filepath.Join(b.work, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module "+name+"\n\ngo 1.22\n"), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(source), 0o644); err != nil {
		return "", err
	}
	out := filepath.Join(b.bin, name)
	return out, buildIn(dir, out, ".")
}

const helloSource = `package main

func main() {}
`

// wrapperSource is the least a wrapper written in Go does.
const wrapperSource = `package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 16)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2)
	attr := &syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{0, 1, 2}, Sys: &syscall.SysProcAttr{Setpgid: true}}
	pid, err := syscall.ForkExec(os.Args[1], os.Args[1:], attr)
	if err != nil {
		os.Exit(127)
	}
	go func() {
		for sig := range signals {
			syscall.Kill(pid, sig.(syscall.Signal))
		}
	}()
	var status syscall.WaitStatus
	for {
		if _, err := syscall.Wait4(pid, &status, 0, nil); err != syscall.EINTR {
			break
		}
	}
	os.Exit(status.ExitStatus())
}
`

// p50 is the launch's median wall time, CPU time and page faults.
func (l *launch) p50() (wall, cpu time.Duration, faults int64) {
	return newRow("", l.wall).p50, newRow("", l.cpu).p50, slices.Sorted(slices.Values(l.faults))[len(l.faults)/2]
}
