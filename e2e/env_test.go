//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
)

// Fixed names, so that a later run finds (and cleans) what a killed run left.
const (
	// baseDir holds every runtime folder: containerd's root and state, the
	// kubelet's root, static Pod manifests, Pod logs, CNI state.
	defaultBaseDir = "/var/lib/job-signal-e2e"
	// cgroupName is a cgroup (in every hierarchy) holding everything the
	// suite starts: containerd, its shims, the kubelet, and every Pod.
	cgroupName = "job-signal-e2e"
	nodeName   = "e2e-node"
	bridgeName = "jse2e0"
	// podSubnet is only reachable on this machine: the bridge has no
	// address and no route leads out of it.
	podSubnet = "10.213.77.0/24"

	kubeletReadOnlyPort = 10255
	kubeletHealthzPort  = 10248
	kubeletPort         = 10250

	// Local images; Pods use them with imagePullPolicy Never.
	pauseImage   = "localhost/pause:e2e"
	busyboxImage = "localhost/busybox:e2e"
)

// paths are where the suite keeps things; see README.md.
type paths struct {
	repo    string // the repository root
	work    string // e2e/.work: binaries, image archives, daemon logs
	bin     string
	logs    string
	cache   string // survives runs: the kubelet binary
	base    string
	cgroups string // the cgroup's path inside each hierarchy, e.g. /job-signal-e2e
}

func newPaths() (paths, error) {
	wd, err := os.Getwd() // go test runs in the package folder, e2e/
	if err != nil {
		return paths{}, err
	}
	repo := filepath.Dir(wd)
	work := filepath.Join(wd, ".work")
	cache := os.Getenv("E2E_CACHE")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return paths{}, err
		}
		cache = filepath.Join(home, ".cache", "job-signal-e2e")
	}
	base := os.Getenv("E2E_BASE")
	if base == "" {
		base = defaultBaseDir
	}
	return paths{
		repo: repo, work: work,
		bin: filepath.Join(work, "bin"), logs: filepath.Join(work, "logs"),
		cache: cache, base: base, cgroups: "/" + cgroupName,
	}, nil
}

func (p paths) containerdDir() string  { return filepath.Join(p.base, "containerd") }
func (p paths) containerdSock() string { return filepath.Join(p.base, "containerd", "containerd.sock") }
func (p paths) kubeletRoot() string    { return filepath.Join(p.base, "kubelet") }
func (p paths) manifests() string      { return filepath.Join(p.base, "manifests") }
func (p paths) podLogs() string        { return filepath.Join(p.base, "pod-logs") }
func (p paths) cniConfDir() string     { return filepath.Join(p.base, "cni", "net.d") }
func (p paths) cniDataDir() string     { return filepath.Join(p.base, "cni", "ipam") }
func (p paths) buildahDir() string     { return filepath.Join(p.base, "buildah") }

// ours says whether a process's command line is that of one of the
// suite's daemons or of a containerd shim serving the suite's containerd:
// how the suite recognises them even from a run that was killed before it
// could clean up. Other processes that merely name our folders (a "tail -f"
// of a log in another terminal) are not ours.
func (p paths) ours(cmdline string) bool {
	for _, sig := range []string{
		"-address " + p.containerdSock(),                              // containerd-shim-runc-v2
		"--config " + filepath.Join(p.containerdDir(), "config.toml"), // containerd
		"--root-dir " + p.kubeletRoot(),                               // kubelet
	} {
		if strings.Contains(cmdline, sig) {
			return true
		}
	}
	return false
}
