package proc

import (
	"errors"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// GroupAlive reports whether process group pgid still has a live member.
// Zombies do not count: they are dead and wait only for their parent to
// reap them, which, when their parent is the machine's PID 1 rather than
// us, may take seconds.
func GroupAlive(pgid int) bool {
	if errors.Is(unix.Kill(-pgid, 0), unix.ESRCH) {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true // cannot tell zombies apart: count them
	}
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil && liveIn(pid, pgid) {
			return true
		}
	}
	return false
}

// liveIn reports whether pid is a live (not zombie) member of group pgid.
func liveIn(pid, pgid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false // gone since the listing
	}
	// "pid (comm) state ppid pgrp ...": comm may hold spaces and ")".
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return false
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 3 {
		return false
	}
	group, err := strconv.Atoi(fields[2])
	return err == nil && group == pgid && fields[0] != "Z"
}
