// Package procfs reads the few facts about Linux processes that the soak
// needs from /proc: whether a process is still running, when it started
// (to tell a PID apart from a later process that reuses it), its parent,
// and its command line.
package procfs

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Stat is the part of /proc/PID/stat the soak uses.
type Stat struct {
	PID   int
	State byte // R, S, D, Z, T...
	PPID  int
	// StartTime is in clock ticks since boot: with the PID it names one
	// process for ever, since PIDs are reused (pid_max may be 32768).
	StartTime uint64
}

// Zombie reports whether the process has exited and waits to be reaped.
func (s Stat) Zombie() bool { return s.State == 'Z' || s.State == 'X' }

// ReadStat reads /proc/PID/stat. A process that does not exist gives an
// error satisfying errors.Is(err, os.ErrNotExist).
func ReadStat(pid int) (Stat, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Stat{}, err
	}
	return parseStat(pid, data)
}

// parseStat splits after the command name, which is in parentheses and may
// itself hold spaces and parentheses: the last ")" ends it.
func parseStat(pid int, data []byte) (Stat, error) {
	end := bytes.LastIndexByte(data, ')')
	if end < 0 {
		return Stat{}, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	fields := strings.Fields(string(data[end+1:]))
	// fields[0] is field 3 of proc(5) (state), so field N is fields[N-3].
	if len(fields) < 20 {
		return Stat{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields))
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil {
		return Stat{}, fmt.Errorf("/proc/%d/stat: ppid: %w", pid, err)
	}
	start, err := strconv.ParseUint(fields[19], 10, 64)
	if err != nil {
		return Stat{}, fmt.Errorf("/proc/%d/stat: starttime: %w", pid, err)
	}
	return Stat{PID: pid, State: fields[0][0], PPID: ppid, StartTime: start}, nil
}

// Running reports whether the process PID that started at startTime is
// still there and not a zombie. A zombie has ended: only its exit status
// is left for its parent.
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

// Matching lists the running (non-zombie) processes whose command line
// contains needle in one of its arguments. Processes that end while being
// read are skipped.
func Matching(needle string) []Stat {
	pids, _ := All()
	var found []Stat
	for _, pid := range pids {
		args, err := Cmdline(pid)
		if err != nil || !containsArg(args, needle) {
			continue
		}
		st, err := ReadStat(pid)
		if err != nil || st.Zombie() {
			continue
		}
		found = append(found, st)
	}
	return found
}

func containsArg(args []string, needle string) bool {
	for _, a := range args {
		if strings.Contains(a, needle) {
			return true
		}
	}
	return false
}

// Children lists the processes (zombies included) whose parent is ppid.
func Children(ppid int) []Stat {
	pids, _ := All()
	var found []Stat
	for _, pid := range pids {
		st, err := ReadStat(pid)
		if err == nil && st.PPID == ppid {
			found = append(found, st)
		}
	}
	return found
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
