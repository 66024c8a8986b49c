package procfs

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Alive reports whether process pid exists and is not a zombie. A zombie
// has ended: only its exit status is left for its parent.
func Alive(pid int) bool {
	st, err := ReadStat(pid)
	return err == nil && !st.Zombie()
}

// Running reports whether the process pid that started at startTime is
// still there and not a zombie: a later process reusing the PID is not it.
func Running(pid int, startTime uint64) bool {
	st, err := ReadStat(pid)
	return err == nil && st.StartTime == startTime && !st.Zombie()
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

// All lists the PIDs of every process on the system.
func All() ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// each calls f with the stat of every process that can be read (processes
// that end while being listed are skipped).
func each(f func(Stat)) {
	pids, _ := All()
	for _, pid := range pids {
		if st, err := ReadStat(pid); err == nil {
			f(st)
		}
	}
}

// Matching lists the running (non-zombie) processes whose command line
// contains needle in one of its arguments.
func Matching(needle string) []Stat {
	var found []Stat
	each(func(st Stat) {
		if st.Zombie() {
			return
		}
		args, err := Cmdline(st.PID)
		if err == nil && strings.Contains(strings.Join(args, "\x00"), needle) {
			found = append(found, st)
		}
	})
	return found
}

// Children lists the processes (zombies included) whose parent is ppid.
func Children(ppid int) []Stat {
	var found []Stat
	each(func(st Stat) {
		if st.PPID == ppid {
			found = append(found, st)
		}
	})
	return found
}

// Descendants lists the processes below pid (children, their children...),
// zombies included, parents before their children.
func Descendants(pid int) []int {
	children := map[int][]int{}
	each(func(st Stat) { children[st.PPID] = append(children[st.PPID], st.PID) })
	var out []int
	for queue := []int{pid}; len(queue) > 0; queue = queue[1:] {
		for _, c := range children[queue[0]] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// Describe is a one-line account of a process for a failure report:
// state, parent and command line, or that it is gone.
func Describe(pid int) string {
	st, err := ReadStat(pid)
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
