// Package procinfo is what tests, the soak and the benchmarks read about
// processes beyond what the product does (internal/procfs, whose parser of
// /proc/PID/stat it uses): whether one is alive, its command line, a
// one-line account of it, its memory and context switches, and a signal by
// name.
package procinfo

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/job-signal/job-signal/internal/proc"
	"github.com/job-signal/job-signal/internal/procfs"
)

// Alive reports whether process pid exists and is not a zombie. A zombie
// has ended: only its exit status is left for its parent.
func Alive(pid int) bool {
	st, err := procfs.ReadStat(pid)
	return err == nil && !st.Zombie()
}

// Cmdline is the process's arguments (empty for zombies and kernel threads).
func Cmdline(pid int) ([]string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return nil, err
	}
	data = bytes.TrimSuffix(data, []byte{0})
	if len(data) == 0 {
		return nil, nil
	}
	return strings.Split(string(data), "\x00"), nil
}

// Matching lists the running (non-zombie) processes whose command line
// contains needle in one of its arguments.
func Matching(needle string) []procfs.Stat {
	var found []procfs.Stat
	pids, _ := procfs.All()
	for _, pid := range pids {
		st, err := procfs.ReadStat(pid)
		if err != nil || st.Zombie() {
			continue // ended while being listed
		}
		args, err := Cmdline(st.PID)
		if err == nil && strings.Contains(strings.Join(args, "\x00"), needle) {
			found = append(found, st)
		}
	}
	return found
}

// Describe is a one-line account of a process for a failure report:
// state, parent and command line, or that it is gone.
func Describe(pid int) string {
	st, err := procfs.ReadStat(pid)
	if err != nil {
		return fmt.Sprintf("pid %d: gone", pid)
	}
	args, _ := Cmdline(pid)
	wchan, _ := os.ReadFile(fmt.Sprintf("/proc/%d/wchan", pid))
	return fmt.Sprintf("pid %d: state %c ppid %d wchan %s: %s", pid, st.State, st.PPID, wchan, strings.Join(args, " "))
}

// StatusValue is the number that key's value in /proc/PID/status starts
// with: VmRSS in KiB, voluntary_ctxt_switches...
func StatusValue(pid int, key string) (int, error) {
	return statusValue(fmt.Sprintf("/proc/%d/status", pid), key)
}

// ContextSwitches sums the voluntary and involuntary context switches of
// every thread of process pid.
func ContextSwitches(pid int) int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	total := 0
	for _, t := range tasks {
		for _, key := range []string{"voluntary_ctxt_switches", "nonvoluntary_ctxt_switches"} {
			n, _ := statusValue(t, key)
			total += n
		}
	}
	return total
}

func statusValue(path, key string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != key {
			continue
		}
		fields := strings.Fields(v)
		if len(fields) == 0 {
			break
		}
		n, err := strconv.Atoi(fields[0])
		if err != nil {
			return 0, fmt.Errorf("%s: %s: %w", path, key, err)
		}
		return n, nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("%s: no %s", path, key)
}

// ParseSignal parses a signal name from allowed, with or without the SIG
// prefix, in any case: "TERM", "SIGTERM", "term".
func ParseSignal(name string, allowed []syscall.Signal) (syscall.Signal, error) {
	upper := strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(name)), "SIG")
	var names []string
	for _, sig := range allowed {
		if proc.SignalName(sig) == upper {
			return sig, nil
		}
		names = append(names, proc.SignalName(sig))
	}
	return 0, fmt.Errorf("unknown signal %q: use one of %s", name, strings.Join(names, ", "))
}
