package proc

import (
	"errors"
	"os"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/job-signal/job-signal/internal/procfs"
)

// GroupAlive reports whether process group pgid still has a live member.
// Zombies do not count: they are dead and wait only for their parent to
// reap them, which, when their parent is the machine's PID 1 rather than
// us, may take seconds.
func GroupAlive(pgid int) bool {
	if pgid <= 0 {
		return false // kill(0) and kill(-1) would mean other processes
	}
	if errors.Is(unix.Kill(-pgid, 0), unix.ESRCH) {
		return false
	}
	pids, err := procfs.All()
	if err != nil {
		return true // cannot tell zombies apart: count them
	}
	return slices.ContainsFunc(pids, func(pid int) bool { return liveIn(pid, pgid) })
}

// liveIn reports whether pid is a live (not zombie) member of group pgid.
// procfs.Fields only splits the line, the part with a catch; ReadStat
// would parse fields sidecar-watch has no use for, and grow it more.
func liveIn(pid, pgid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	// f[0] is the state, f[2] the process group (fields 3 and 5 of proc(5)).
	f := procfs.Fields(data)
	return err == nil && len(f) > 2 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) // an error: gone since the listing
}
