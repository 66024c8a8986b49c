//go:build e2e

package e2e

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// suite is the environment every test uses: set up once by TestMain.
type suite struct {
	paths
	runID      string // makes this run's Pod names unique
	kubeletBin string
	containerd *daemon
	kubelet    *daemon
	teardownMu sync.Mutex
	tornDown   bool
}

var env *suite

func logf(format string, args ...any) {
	fmt.Printf("e2e: "+format+"\n", args...)
}

func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.list"); f != nil && f.Value.String() != "" {
		os.Exit(m.Run()) // only listing tests: start nothing
	}
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	if os.Geteuid() != 0 {
		logf("the e2e suite runs containers: run it as root")
		return 1
	}
	p, err := newPaths()
	if err != nil {
		logf("%v", err)
		return 1
	}
	env = &suite{paths: p, runID: fmt.Sprintf("%04x", time.Now().UnixNano()/1e6%0x10000)}
	// Ctrl-C or a TERM: stop what was started before exiting.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		logf("got %v: tearing down", sig)
		if err := env.tearDown(); err != nil {
			logf("teardown: %v", err)
		}
		os.Exit(130)
	}()

	start := time.Now()
	if err := env.setUp(); err != nil {
		logf("setup failed: %v", err)
		if err := env.tearDown(); err != nil {
			logf("teardown: %v", err)
		}
		return 1
	}
	logf("E2E_TIMING setup_seconds=%.1f", time.Since(start).Seconds())
	code := m.Run()
	if os.Getenv("E2E_KEEP") != "" {
		logf("E2E_KEEP is set: containerd and the kubelet keep running (see e2e/README.md); the next run cleans up")
		return code
	}
	if err := env.tearDown(); err != nil {
		logf("teardown: %v", err)
		code = 1
	}
	return code
}

func (s *suite) setUp() error {
	for _, dir := range []string{s.bin, s.logs} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	if err := ensurePackages(logf); err != nil {
		return err
	}
	var err error
	if s.kubeletBin, err = buildKubelet(s.paths, logf); err != nil {
		return err
	}
	if err := buildTools(s.paths); err != nil {
		return err
	}
	if err := s.cleanStale(); err != nil {
		return fmt.Errorf("cleaning up after an earlier run: %w", err)
	}
	if err := createCgroups(s.cgroups); err != nil {
		return err
	}
	if s.containerd, err = startContainerd(s.paths); err != nil {
		return err
	}
	pause, err := pauseImageSpec(s.paths)
	if err != nil {
		return err
	}
	busybox, err := busyboxImageSpec()
	if err != nil {
		return err
	}
	for _, img := range []image{pause, busybox} {
		if err := loadImage(s.paths, img); err != nil {
			return err
		}
	}
	s.kubelet, err = startKubelet(s.paths, s.kubeletBin)
	return err
}

// cleanStale removes what an earlier run left (it was killed, or kept with
// E2E_KEEP): its processes, its sandboxes' network namespaces, mounts,
// folders and cgroups.
func (s *suite) cleanStale() error {
	procs, err := ourProcesses(s.paths)
	if err != nil {
		return err
	}
	_, statErr := os.Stat(s.base)
	if len(procs) == 0 && errors.Is(statErr, fs.ErrNotExist) {
		return nil
	}
	logf("cleaning up after an earlier run (%d processes left)", len(procs))
	if left, err := killOurProcesses(s.paths, time.Now().Add(30*time.Second)); err != nil {
		return fmt.Errorf("%w: %v", err, left)
	}
	if _, err := os.Stat(filepath.Join(s.containerdDir(), "root")); err == nil {
		// The old sandboxes' network namespaces are mounted outside our
		// folders: only containerd knows them. Let it tear them down.
		if err := createCgroups(s.cgroups); err != nil {
			return err
		}
		if d, err := startContainerd(s.paths); err != nil {
			logf("could not restart the old containerd to clean its sandboxes: %v", err)
		} else {
			if err := criCleanup(s.paths); err != nil {
				logf("cleaning old sandboxes: %v", err)
			}
			if err := d.stop(30 * time.Second); err != nil {
				logf("%v", err)
			}
		}
		if left, err := killOurProcesses(s.paths, time.Now().Add(30*time.Second)); err != nil {
			return fmt.Errorf("%w: %v", err, left)
		}
	}
	removeContainerLogLinks(s.paths)
	if err := removeAllUnder(s.base); err != nil {
		return err
	}
	deleteBridge()
	return removeCgroups(s.cgroups, time.Now().Add(30*time.Second))
}

// tearDown stops everything setUp started, in order, by PID, and checks
// that nothing is left: no process, no mount, no folder, no cgroup.
func (s *suite) tearDown() error {
	s.teardownMu.Lock()
	defer s.teardownMu.Unlock()
	if s.tornDown {
		return nil
	}
	s.tornDown = true
	var errs []error
	if s.kubelet != nil {
		if err := s.deleteAllPods(); err != nil {
			errs = append(errs, err)
		}
		if err := s.kubelet.stop(30 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	if s.containerd != nil {
		if s.containerd.running() == nil {
			if err := criCleanup(s.paths); err != nil {
				errs = append(errs, err)
			}
		}
		if err := s.containerd.stop(30 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	// Whatever is still running was not stopped by its owner: a bug to see.
	if procs, err := ourProcesses(s.paths); err != nil {
		errs = append(errs, err)
	} else if len(procs) > 0 {
		errs = append(errs, fmt.Errorf("left running after containerd and the kubelet stopped: %v", procs))
		if left, err := killOurProcesses(s.paths, time.Now().Add(30*time.Second)); err != nil {
			errs = append(errs, fmt.Errorf("%w: %v", err, left))
		}
	}
	removeContainerLogLinks(s.paths)
	if err := removeAllUnder(s.base); err != nil {
		errs = append(errs, err)
	}
	deleteBridge()
	if err := removeCgroups(s.cgroups, time.Now().Add(30*time.Second)); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	logf("teardown complete: no process, mount, folder or cgroup of the suite is left")
	return nil
}

// deleteAllPods removes every static Pod manifest and waits until the
// kubelet has stopped them all.
func (s *suite) deleteAllPods() error {
	entries, _ := os.ReadDir(s.manifests())
	for _, e := range entries {
		_ = os.Remove(filepath.Join(s.manifests(), e.Name()))
	}
	return poll(90*time.Second, 200*time.Millisecond, func() (bool, string, error) {
		pods, err := kubeletPods()
		if err != nil {
			return false, err.Error(), nil
		}
		if len(pods) > 0 {
			return false, fmt.Sprintf("%d Pods still listed", len(pods)), nil
		}
		pids, err := cgroupPids(s.cgroups + "/pods")
		return err == nil && len(pids) == 0, fmt.Sprintf("processes in Pod cgroups: %v", pids), err
	})
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
func deleteBridge() {
	if _, err := os.Stat("/sys/class/net/" + bridgeName); err != nil {
		return
	}
	if out, err := exec.Command("ip", "link", "delete", bridgeName).CombinedOutput(); err != nil {
		logf("deleting bridge %s: %v %s", bridgeName, err, strings.TrimSpace(string(out)))
	}
}
