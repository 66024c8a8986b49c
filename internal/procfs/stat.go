// Package procfs reads facts about Linux processes from /proc. It holds the
// project's one parser of /proc/PID/stat, used by internal/proc (which
// ships in both binaries, and uses only Fields: this file must need
// nothing but the standard library) and internal/testing/procinfo (the
// testscript harness, the soak and the benchmarks).
package procfs

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Stat is the part of /proc/PID/stat (proc(5)) the project uses.
type Stat struct {
	PID   int
	State byte // R, S, D, Z, T, X...
	PPID  int
	PGRP  int // process group
	// UTime and STime are the CPU time spent in user and kernel mode, in
	// clock ticks (usually 10 ms).
	UTime, STime uint64
	// StartTime is in clock ticks since boot: with the PID it names one
	// process for ever, since PIDs are reused (pid_max may be 32768).
	StartTime uint64
}

// Zombie reports whether the process has exited: it waits to be reaped
// (Z), or is being (X).
func (s Stat) Zombie() bool { return s.State == 'Z' || s.State == 'X' }

// ReadStat reads /proc/PID/stat. A process that does not exist gives an
// error satisfying errors.Is(err, os.ErrNotExist).
func ReadStat(pid int) (Stat, error) {
	data, err := os.ReadFile(statPath(pid))
	if err != nil {
		return Stat{}, err
	}
	return ParseStat(pid, data)
}

func statPath(pid int) string { return "/proc/" + strconv.Itoa(pid) + "/stat" }

// Fields splits the content of /proc/PID/stat after the command name:
// Fields(data)[0] is field 3 of proc(5) (the state), field N is [N-3];
// nothing when there is no command name. It is the one place that knows
// the format's catch: the command name, second, in parentheses, may itself
// hold spaces and parentheses, so the last ")" ends it. sidecar-watch
// carries it (internal/proc): it is as small as reading a field right can be.
func Fields(data []byte) []string {
	s := string(data)
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return nil
	}
	return strings.Fields(s[end+1:])
}

// ParseStat parses the content of /proc/PID/stat.
func ParseStat(pid int, data []byte) (Stat, error) {
	fields := Fields(data)
	if len(fields) < 20 || len(fields[0]) != 1 {
		return Stat{}, fmt.Errorf("%s: %d fields after the command name in parentheses, want a state and at least 19 numbers", statPath(pid), len(fields))
	}
	// ppid, pgrp, utime, stime, starttime
	var v [5]uint64
	for i, n := range [5]int{4, 5, 14, 15, 22} {
		var err error
		if v[i], err = strconv.ParseUint(fields[n-3], 10, 64); err != nil {
			return Stat{}, fmt.Errorf("%s: field %d: %w", statPath(pid), n, err)
		}
	}
	return Stat{PID: pid, State: fields[0][0], PPID: int(v[0]), PGRP: int(v[1]), UTime: v[2], STime: v[3], StartTime: v[4]}, nil
}
