package proc

import (
	"os"
	"slices"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/job-signal/job-signal/internal/procfs"
)

// Proc is a process as it was seen: a later process reusing the PID is
// not it.
type Proc struct {
	PID       int
	StartTime uint64
	PGID      int // its process group when it was seen
}

// Group is the process's process group now: a daemon leaves the group it
// was seen in (setsid) when it gets to it. While it is gone, or a zombie,
// it is the group it was seen in.
func (p Proc) Group() int {
	if st, err := procfs.ReadStat(p.PID); err == nil && st.StartTime == p.StartTime && !st.Zombie() {
		return st.PGRP
	}
	return p.PGID
}

// Running reports whether the process is still there and not a zombie.
func (p Proc) Running() bool { return procfs.Running(p.PID, p.StartTime) }

// SignalGroup sends sig to process group pgid; a group already gone is
// not an error.
func SignalGroup(pgid int, sig syscall.Signal) error {
	return ignoreGone(unix.Kill(-pgid, sig))
}

// KillGroup sends SIGKILL to process group pgid.
func KillGroup(pgid int) { unix.Kill(-pgid, syscall.SIGKILL) }

// Orphans lists the live processes re-parented to this one (as PID 1 or a
// child subreaper) that it did not start, outside process group except
// (whose members may still be dying of a SIGKILL just sent). Empty unless
// this process reaps.
func Orphans(except int) []Proc {
	r := activeReaper.Load()
	if r == nil {
		return nil
	}
	var out []Proc
	for _, st := range procfs.Children(os.Getpid()) {
		if !st.Zombie() && st.PGRP != except && !r.owns(st.PID) {
			out = append(out, Proc{PID: st.PID, StartTime: st.StartTime, PGID: st.PGRP})
		}
	}
	return out
}

// KillAll sends SIGKILL to each process group in groups, to every process
// below roots (their own sessions and groups too), and, with orphans, to
// every orphan re-parented here. Processes below a root are found before
// any is killed: a killed parent's children are re-parented away and could
// not be found under it any more. It returns what it killed, to wait for.
func KillAll(groups, roots []int, orphans bool) []Proc {
	var targets []Proc
	add := func(pid int) {
		if st, err := procfs.ReadStat(pid); err == nil && !st.Zombie() {
			targets = append(targets, Proc{PID: pid, StartTime: st.StartTime, PGID: st.PGRP})
		}
	}
	if orphans {
		roots = slices.Clone(roots)
		for _, o := range Orphans(0) {
			roots = append(roots, o.PID)
		}
	}
	for _, root := range roots {
		add(root)
		for _, pid := range procfs.Descendants(root) {
			add(pid)
		}
	}
	for _, g := range groups {
		KillGroup(g)
	}
	for _, p := range targets {
		unix.Kill(p.PID, syscall.SIGKILL)
	}
	return targets
}
