package cluster

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
)

// Fixed names and ports, so that a later run finds (and cleans) what a
// killed run left, and a person can find the cluster by hand.
const (
	// DefaultBase holds every runtime folder: certificates, etcd's data,
	// containerd's root and state, the kubelet's root, Pod logs, CNI state.
	DefaultBase = "/var/lib/job-signal-e2e"
	// cgroupName is a cgroup (in every hierarchy) holding everything the
	// suite starts: the daemons, containerd's shims, and every Pod.
	cgroupName = "job-signal-e2e"
	// NodeName is the one Node's name. The kubelet refuses a loopback
	// --node-ip, so the Node's InternalIP is this machine's address; the API
	// server reaches the kubelet by this name (Hostname address first), which
	// resolves to 127.0.0.1, where the kubelet listens.
	NodeName   = "localhost"
	bridgeName = "jse2e0"
	// podSubnet is only reachable on this machine: the bridge is its
	// gateway (podGateway), and no route leads out of it (network.go).
	podSubnet = "10.213.77.0/24"
	// serviceSubnet is not routed (no kube-proxy): it gives Services and the
	// cluster DNS setting their addresses; only the kubernetes Service's,
	// firstService:443, leads somewhere, to the API server (network.go).
	serviceSubnet = "10.213.78.0/24"
	firstService  = "10.213.78.1"
	clusterDNS    = "10.213.78.10" // nothing answers there: Jobs need no DNS

	etcdPort          = 12379
	etcdPeerPort      = 12380
	apiserverPort     = 16443
	controllerMgrPort = 10257
	schedulerPort     = 10259
	kubeletPort       = 10250
	kubeletHealthz    = 10248

	// Local images; Pods use them with imagePullPolicy Never.
	PauseImage   = "localhost/pause:e2e"
	BusyboxImage = "localhost/busybox:e2e"
)

// ports are every port the cluster listens on, all on 127.0.0.1.
var ports = []int{etcdPort, etcdPeerPort, apiserverPort, controllerMgrPort, schedulerPort, kubeletPort, kubeletHealthz}

// paths are where the cluster keeps things; see e2e/README.md.
type paths struct {
	repo    string // the repository root
	work    string // e2e/.work: tools, image archives, daemon logs
	bin     string
	logs    string
	cache   string // survives runs: the cluster's binaries
	base    string
	cgroups string // the cgroup's path inside each hierarchy, e.g. /job-signal-e2e
	keep    bool   // daemons outlive this process (no parent-death signal)
}

func newPaths(cfg Config) (paths, error) {
	repo := cfg.Repo
	if repo == "" {
		var err error
		if repo, err = FindRepo(); err != nil {
			return paths{}, err
		}
	}
	work := cfg.Work
	if work == "" {
		work = filepath.Join(repo, "e2e", ".work")
	}
	cache := cfg.Cache
	if cache == "" {
		var err error
		if cache, err = DefaultCache(); err != nil {
			return paths{}, err
		}
	}
	base := cfg.Base
	if base == "" {
		base = os.Getenv("E2E_BASE")
	}
	if base == "" {
		base = DefaultBase
	}
	return paths{
		repo: repo, work: work,
		bin: filepath.Join(work, "bin"), logs: filepath.Join(work, "logs"),
		cache: cache, base: base, cgroups: "/" + cgroupName, keep: cfg.Keep,
	}, nil
}

// DefaultCache is where the suites keep what they build between runs (the
// cluster's binaries, distribution's registry): $E2E_CACHE, else
// ~/.cache/job-signal-e2e.
func DefaultCache() (string, error) {
	if cache := os.Getenv("E2E_CACHE"); cache != "" {
		return cache, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".cache", "job-signal-e2e"), nil
}

// FindRepo walks up from the working directory to the folder whose go.mod
// is this project's (go test runs in the package's folder).
func FindRepo() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(b), "module github.com/job-signal/job-signal\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("cannot find the job-signal repository above the working directory: set Config.Repo")
		}
		dir = parent
	}
}

func (p paths) pki() string            { return filepath.Join(p.base, "pki") }
func (p paths) etcdDir() string        { return filepath.Join(p.base, "etcd") }
func (p paths) containerdDir() string  { return filepath.Join(p.base, "containerd") }
func (p paths) containerdSock() string { return filepath.Join(p.base, "containerd", "containerd.sock") }
func (p paths) kubeletRoot() string    { return filepath.Join(p.base, "kubelet") }
func (p paths) podLogs() string        { return filepath.Join(p.base, "pod-logs") }
func (p paths) cniConfDir() string     { return filepath.Join(p.base, "cni", "net.d") }
func (p paths) cniDataDir() string     { return filepath.Join(p.base, "cni", "ipam") }
func (p paths) buildahDir() string     { return filepath.Join(p.base, "buildah") }

// adminKubeconfig is the cluster-admin's kubeconfig (O=system:masters).
func (p paths) adminKubeconfig() string { return filepath.Join(p.base, "admin.kubeconfig") }

// ours says whether a process's command line is that of one of the
// suite's daemons or of a containerd shim serving the suite's containerd:
// how the suite recognises them even from a run that was killed before it
// could clean up. Other processes that merely name our folders (a "tail -f"
// of a log in another terminal) are not ours.
func (p paths) ours(cmdline string) bool {
	for _, sig := range []string{
		"-address " + p.containerdSock(),                              // containerd-shim-runc-v2
		"--config " + filepath.Join(p.containerdDir(), "config.toml"), // containerd
	} {
		if strings.Contains(cmdline, sig) {
			return true
		}
	}
	// etcd and the Kubernetes components: run from the cache, on our state.
	return strings.HasPrefix(cmdline, p.cache+"/") && strings.Contains(cmdline, p.base+"/")
}

// checkPortsFree fails, naming the port, if another program listens on one
// of the cluster's ports.
func checkPortsFree() error {
	for _, port := range ports {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			return fmt.Errorf("port %d is taken (another cluster, or a run that is still stopping?): %w", port, err)
		}
		l.Close()
	}
	return nil
}
