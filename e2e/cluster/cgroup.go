package cluster

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The suite's cgroup, created in every mounted hierarchy, contains:
//
//	/job-signal-e2e/daemons   containerd and the kubelet; containerd's shims
//	                          inherit it
//	/job-signal-e2e/pods      the kubelet's cgroupRoot: every Pod's cgroup
//
// So "every process the suite started" is a kernel fact, not a guess from
// process names: it is the processes in this subtree.

// cgroupMounts returns the mount points of the cgroup hierarchies (v1: one
// per controller set; v2: one).
func cgroupMounts() ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var mounts []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// fields: id parent maj:min root mountpoint opts... - fstype source superopts
		fields := strings.Fields(sc.Text())
		for i, f := range fields {
			if f == "-" && i+1 < len(fields) && (fields[i+1] == "cgroup" || fields[i+1] == "cgroup2") {
				mounts = append(mounts, unescapeMount(fields[4]))
			}
		}
	}
	if len(mounts) == 0 {
		return nil, errors.New("no cgroup hierarchy is mounted")
	}
	return mounts, sc.Err()
}

// trackingMount is the one hierarchy in which the suite lists processes: the
// pids controller's (v1) or the unified one (v2).
func trackingMount() (string, error) {
	mounts, err := cgroupMounts()
	if err != nil {
		return "", err
	}
	for _, m := range mounts {
		if filepath.Base(m) == "pids" {
			return m, nil
		}
	}
	if len(mounts) == 1 {
		return mounts[0], nil
	}
	return "", fmt.Errorf("no pids cgroup hierarchy among %v", mounts)
}

// createCgroups makes rel/daemons and rel/pods in every hierarchy.
func createCgroups(rel string) error {
	mounts, err := cgroupMounts()
	if err != nil {
		return err
	}
	for _, m := range mounts {
		for _, dir := range []string{rel, rel + "/daemons", rel + "/pods"} {
			full := filepath.Join(m, dir)
			if err := os.Mkdir(full, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				return err
			}
			if filepath.Base(m) == "cpuset" {
				// A new v1 cpuset starts with no CPUs and no memory nodes, and
				// a process cannot join it until they are copied from its parent.
				for _, file := range []string{"cpuset.cpus", "cpuset.mems"} {
					b, err := os.ReadFile(filepath.Join(filepath.Dir(full), file))
					if err != nil {
						return err
					}
					if err := os.WriteFile(filepath.Join(full, file), b, 0o644); err != nil {
						return fmt.Errorf("%s: %w", full, err)
					}
				}
			}
		}
	}
	// v2: a cgroup's children only get the controllers it delegates to them.
	if len(mounts) == 1 {
		b, _ := os.ReadFile(filepath.Join(mounts[0], "cgroup.controllers"))
		var enable []string
		for _, c := range strings.Fields(string(b)) {
			enable = append(enable, "+"+c)
		}
		for _, dir := range []string{"", rel} {
			_ = os.WriteFile(filepath.Join(mounts[0], dir, "cgroup.subtree_control"), []byte(strings.Join(enable, " ")), 0o644)
		}
	}
	return nil
}

// joinCgroup moves pid into rel in every hierarchy.
func joinCgroup(rel string, pid int) error {
	mounts, err := cgroupMounts()
	if err != nil {
		return err
	}
	for _, m := range mounts {
		procs := filepath.Join(m, rel, "cgroup.procs")
		if err := os.WriteFile(procs, []byte(strconv.Itoa(pid)), 0o644); err != nil {
			return fmt.Errorf("moving %d to %s: %w", pid, procs, err)
		}
	}
	return nil
}

// cgroupPids lists the processes anywhere in the subtree rel (of the
// tracking hierarchy). A missing subtree has none.
func cgroupPids(rel string) ([]int, error) {
	m, err := trackingMount()
	if err != nil {
		return nil, err
	}
	var pids []int
	err = filepath.WalkDir(filepath.Join(m, rel), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while we walk
			}
			return err
		}
		if !d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(filepath.Join(path, "cgroup.procs"))
		if err != nil {
			return nil // removed while we walk
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
		return nil
	})
	return pids, err
}

// findCgroup returns the path (relative to a hierarchy) of the first cgroup
// named name below rel, or "" if there is none.
func findCgroup(rel, name string) (string, error) {
	m, err := trackingMount()
	if err != nil {
		return "", err
	}
	found := ""
	err = filepath.WalkDir(filepath.Join(m, rel), func(path string, d fs.DirEntry, err error) error {
		if err != nil || found != "" {
			return fs.SkipDir
		}
		if d.IsDir() && d.Name() == name {
			found, _ = filepath.Rel(m, path)
			found = "/" + found
			return fs.SkipAll
		}
		return nil
	})
	return found, err
}

// removeCgroups deletes the subtree rel in every hierarchy, deepest first.
// The kernel refuses while a process is in it, so kill them first.
func removeCgroups(rel string, deadline time.Time) error {
	mounts, err := cgroupMounts()
	if err != nil {
		return err
	}
	for _, m := range mounts {
		var dirs []string
		_ = filepath.WalkDir(filepath.Join(m, rel), func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
		sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
		for _, dir := range dirs {
			for {
				err := syscall.Rmdir(dir)
				if err == nil || errors.Is(err, syscall.ENOENT) {
					break
				}
				// EBUSY lasts a moment after the last process has exited.
				if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
					return fmt.Errorf("rmdir %s: %w", dir, err)
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
	return nil
}

// unescapeMount decodes the octal escapes (\040 for a space) of mountinfo.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
