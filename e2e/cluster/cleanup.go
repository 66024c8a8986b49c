package cluster

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// finalCleanup checks that nothing the cluster started is still running
// (a bug to see: it is killed and reported), and removes the state, the
// bridge and the cgroups.
func finalCleanup(p paths, logf func(string, ...any)) error {
	var errs []error
	if procs, err := ourProcesses(p); err != nil {
		errs = append(errs, err)
	} else if len(procs) > 0 {
		errs = append(errs, fmt.Errorf("left running after every daemon stopped: %v", procs))
		if left, err := killOurProcesses(p, time.Now().Add(30*time.Second)); err != nil {
			errs = append(errs, fmt.Errorf("%w: %v", err, left))
		}
	}
	errs = append(errs, removeState(p, logf))
	return errors.Join(errs...)
}

// removeState removes what a run leaves once its processes are gone: the
// log links, its folders, its netfilter rules, the bridge and its cgroups. It goes on past a
// failure, so that one stuck piece does not leave the others behind.
func removeState(p paths, logf func(string, ...any)) error {
	removeContainerLogLinks(p)
	err := removeAllUnder(p.base)
	deleteRules(logf)
	deleteBridge(logf)
	return errors.Join(err, removeCgroups(p.cgroups, time.Now().Add(30*time.Second)))
}

// Clean stops and removes a cluster that an earlier Start left running
// (Config.Keep) or that a killed run left behind, found by its folder,
// its cgroup and its daemons' command lines, as Start does before it
// builds a new one.
func Clean(cfg Config) error {
	if os.Geteuid() != 0 {
		return errors.New("the cluster's processes and cgroups are root's: run as root")
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	p, err := newPaths(cfg)
	if err != nil {
		return err
	}
	return cleanStale(p, cfg.Logf)
}

// cleanStale removes what an earlier run left (it was killed, or kept with
// E2E_KEEP): its processes, its sandboxes' network namespaces, mounts,
// folders and cgroups.
func cleanStale(p paths, logf func(string, ...any)) error {
	procs, err := ourProcesses(p)
	if err != nil {
		return err
	}
	_, statErr := os.Stat(p.base)
	if len(procs) == 0 && errors.Is(statErr, fs.ErrNotExist) {
		return nil
	}
	logf("cleaning up after an earlier run (%d processes left)", len(procs))
	if left, err := killOurProcesses(p, time.Now().Add(30*time.Second)); err != nil {
		return fmt.Errorf("%w: %v", err, left)
	}
	if _, err := os.Stat(filepath.Join(p.containerdDir(), "root")); err == nil {
		// The old sandboxes' network namespaces are mounted outside our
		// folders: only containerd knows them. Let it tear them down.
		if err := createCgroups(p.cgroups); err != nil {
			return err
		}
		if d, err := startContainerd(p); err != nil {
			logf("could not restart the old containerd to clean its sandboxes: %v", err)
		} else {
			if err := criCleanup(p); err != nil {
				logf("cleaning old sandboxes: %v", err)
			}
			if err := d.stop(30 * time.Second); err != nil {
				logf("%v", err)
			}
		}
		if left, err := killOurProcesses(p, time.Now().Add(30*time.Second)); err != nil {
			return fmt.Errorf("%w: %v", err, left)
		}
	}
	return removeState(p, logf)
}

// removeContainerLogLinks deletes the links the kubelet made to our Pod
// logs in /var/log/containers (a path it does not let us change).
func removeContainerLogLinks(p paths) {
	const dir = "/var/log/containers"
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err == nil && strings.HasPrefix(target, p.podLogs()+"/") {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// deleteBridge removes the CNI bridge, which outlives the Pods.
func deleteBridge(logf func(string, ...any)) {
	if _, err := os.Stat("/sys/class/net/" + bridgeName); err != nil {
		return
	}
	if out, err := exec.Command("ip", "link", "delete", bridgeName).CombinedOutput(); err != nil {
		logf("deleting bridge %s: %v %s", bridgeName, err, strings.TrimSpace(string(out)))
	}
}
