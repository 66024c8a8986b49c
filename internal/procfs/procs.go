package procfs

import (
	"os"
	"strconv"
)

// Running reports whether the process pid that started at startTime is
// still there and not a zombie: a later process reusing the PID is not it.
func Running(pid int, startTime uint64) bool {
	st, err := ReadStat(pid)
	return err == nil && st.StartTime == startTime && !st.Zombie()
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
