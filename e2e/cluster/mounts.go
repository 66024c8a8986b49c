package cluster

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"syscall"
)

// mountsUnder lists the mount points at or below dir, deepest first.
func mountsUnder(dir string) ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMount(fields[4])
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			out = append(out, mp)
		}
	}
	// Deeper first; among equal paths (stacked mounts) the later one first.
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out, sc.Err()
}

// unmountAll unmounts everything below dir: overlay root filesystems and
// shm of containerd, the kubelet's bind mount of its root and its tmpfs
// emptyDirs. A lazy unmount is the fallback for a busy one.
func unmountAll(dir string) error {
	for round := 0; round < 10; round++ {
		mps, err := mountsUnder(dir)
		if err != nil || len(mps) == 0 {
			return err
		}
		for _, mp := range mps {
			if err := syscall.Unmount(mp, 0); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
				_ = syscall.Unmount(mp, syscall.MNT_DETACH)
			}
		}
	}
	mps, _ := mountsUnder(dir)
	return fmt.Errorf("still mounted below %s: %v", dir, mps)
}

// removeAllUnder unmounts and deletes dir, refusing to follow a mount point
// out of it: everything is unmounted first.
func removeAllUnder(dir string) error {
	if err := unmountAll(dir); err != nil {
		return err
	}
	return os.RemoveAll(dir)
}
