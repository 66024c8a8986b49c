package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Config says where the cluster keeps things. Every field has a default.
type Config struct {
	Repo  string // the repository root; default: found above the working directory
	Work  string // tools, image archives and daemon logs; default Repo/e2e/.work
	Cache string // the built binaries, kept between runs; default $E2E_CACHE or ~/.cache/job-signal-e2e
	Base  string // runtime state; default $E2E_BASE or /var/lib/job-signal-e2e
	// Kubernetes is the version to run, as pinned below e2e/kubernetes/
	// (v1.30.14, or just v1.30); default $E2E_K8S_VERSION, else the newest
	// pinned.
	Kubernetes string
	// Packages are more Debian packages the tests need, installed with the
	// cluster's own in one apt run.
	Packages []string
	// Keep leaves the daemons running if this process dies: no parent-death
	// signal (E2E_KEEP). Stop still stops them.
	Keep bool
	// Logf reports progress and one "E2E_TIMING phase=NAME seconds=S" line
	// per phase; default: discard.
	Logf func(format string, args ...any)

	// Kubeconfig, Registry and Load are Attach's (E2E_KUBECONFIG,
	// E2E_REGISTRY, E2E_LOAD): the running cluster's kubeconfig (its current
	// context), and how the images the tests build reach its nodes, one of:
	// Registry, a repository prefix this machine can push to and the nodes
	// pull from (host[:port]/path), or Load, a shell command given each
	// image's archive as its last argument ("kind load image-archive").
	Kubeconfig string
	Registry   string
	Load       string
}

// Cluster is a running one-node cluster. Its methods are safe for
// concurrent use.
type Cluster struct {
	paths
	cfg     Config
	version Version
	feat    Features
	binDir  string // the cached component binaries
	ca      *ca
	daemons []*daemon // in start order; stopped in reverse
	rest    *rest.Config
	client  *apiClient

	clientset     any // kubernetes.Interface: Client's, built once (client_e2e.go)
	clientsetOnce sync.Once

	attached bool              // Attach's: nothing here is ours to start or stop
	imagesMu sync.Mutex        // guards images
	images   map[string]string // a suite image's name -> the reference pushed to Config.Registry

	stopMu  sync.Mutex
	stopped bool
}

// Start builds what is missing (apt packages, the components, cached by
// version), cleans what an earlier run left, and starts etcd, the API
// server, the controller manager, the scheduler, containerd and the
// kubelet; it returns once the Node is Ready and the default namespace can
// run Pods. On error, whatever it started is stopped.
func Start(cfg Config) (*Cluster, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("the cluster runs containers and owns cgroups: run as root")
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	p, err := newPaths(cfg)
	if err != nil {
		return nil, err
	}
	want := cfg.Kubernetes
	if want == "" {
		want = os.Getenv("E2E_K8S_VERSION")
	}
	pinned, err := pinnedVersions(p.repo)
	if err != nil {
		return nil, err
	}
	v, err := chooseVersion(pinned, want)
	if err != nil {
		return nil, err
	}
	c := &Cluster{paths: p, cfg: cfg, version: v, feat: featuresOf(v.minor)}
	c.feat.Powers = builtPowers
	cfg.Logf("Kubernetes %s, etcd %s (native sidecars: %v)", v.Kube, v.Etcd, c.feat.NativeSidecars)
	if err := c.start(); err != nil {
		if stopErr := c.Stop(); stopErr != nil {
			cfg.Logf("stopping after a failed start: %v", stopErr)
		}
		return nil, err
	}
	return c, nil
}

// phase runs one step of the start and logs how long it took.
func (c *Cluster) phase(name string, step func() error) error {
	start := time.Now()
	if err := step(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	c.cfg.Logf("E2E_TIMING phase=%s seconds=%.1f", name, time.Since(start).Seconds())
	return nil
}

func (c *Cluster) start() error {
	if err := mkdirs(c.bin, c.logs); err != nil {
		return err
	}
	pkgs := append(append([]string(nil), debianPackages...), c.cfg.Packages...)
	if err := c.phase("apt", func() error { return ensurePackages(c.cfg.Logf, pkgs) }); err != nil {
		return err
	}
	err := c.phase("build", func() (err error) {
		if c.binDir, err = buildComponents(c.paths, c.version, c.cfg.Logf); err != nil {
			return err
		}
		return buildTools(c.paths)
	})
	if err != nil {
		return err
	}
	if err := c.phase("clean-stale", func() error { return cleanStale(c.paths, c.cfg.Logf) }); err != nil {
		return fmt.Errorf("cleaning up after an earlier run: %w", err)
	}
	return c.phase("cluster-start", c.startDaemons)
}

// startDaemons starts everything in dependency order; docs/cluster.md's
// timings: etcd ~2 s, API server ready ~5 s, Node Ready ~9 s, the default
// ServiceAccount ~12 s.
func (c *Cluster) startDaemons() error {
	if err := checkPortsFree(); err != nil {
		return err
	}
	if err := createCgroups(c.cgroups); err != nil {
		return err
	}
	if err := setUpNetwork(); err != nil {
		return err
	}
	var err error
	if c.ca, err = writePKI(c.paths); err != nil {
		return err
	}
	if c.rest, err = clientcmd.BuildConfigFromFlags("", c.adminKubeconfig()); err != nil {
		return err
	}
	c.rest.QPS, c.rest.Burst = 50, 100 // tests poll and watch a lot; the default 5/10 would throttle them
	if c.client, err = newAPIClient(c.rest); err != nil {
		return err
	}
	steps := []struct {
		name  string
		start func() (*daemon, error)
	}{
		{"etcd", func() (*daemon, error) { return startEtcd(c.paths, c.binDir) }},
		{"kube-apiserver", func() (*daemon, error) { return startAPIServer(c.paths, c.binDir, c.feat) }},
		{"kube-controller-manager", func() (*daemon, error) { return startControllerManager(c.paths, c.binDir, c.feat) }},
		{"kube-scheduler", func() (*daemon, error) { return startScheduler(c.paths, c.binDir, c.feat) }},
		{"containerd", func() (*daemon, error) { return startContainerd(c.paths) }},
		{"kubelet", func() (*daemon, error) { return startKubelet(c.paths, c.binDir, c.feat) }},
	}
	for _, s := range steps {
		start := time.Now()
		d, err := s.start()
		if err != nil {
			return err
		}
		c.daemons = append(c.daemons, d)
		if err := c.ready(s.name, d); err != nil {
			return err
		}
		c.cfg.Logf("%s up after %.1f s", s.name, time.Since(start).Seconds())
	}
	return c.waitUsable()
}

// ready waits until a daemon just started does its part.
func (c *Cluster) ready(name string, d *daemon) error {
	switch name {
	case "kube-apiserver":
		return c.waitAPIServer(d)
	case "kube-controller-manager":
		return waitHTTP(d, time.Minute, selfSigned, fmt.Sprintf("https://127.0.0.1:%d/healthz", controllerMgrPort))
	case "kube-scheduler":
		return waitHTTP(d, time.Minute, selfSigned, fmt.Sprintf("https://127.0.0.1:%d/healthz", schedulerPort))
	case "containerd":
		// The sandbox image must be there before the kubelet creates a Pod.
		pause, err := pauseImageSpec(c.paths)
		if err != nil {
			return err
		}
		busybox, err := busyboxImageSpec()
		if err != nil {
			return err
		}
		for _, img := range []Image{pause, busybox} {
			if err := loadImage(c.paths, img); err != nil {
				return err
			}
		}
	}
	return nil
}

// running says whether the daemon of that name was started and still runs.
func (c *Cluster) running(name string) bool {
	for _, d := range c.daemons {
		if d.name == name {
			return d.running() == nil
		}
	}
	return false
}

// Kubeconfig is the path of the cluster-admin's kubeconfig (group
// system:masters), for kubectl (KUBECONFIG) or another client.
func (c *Cluster) Kubeconfig() string {
	if c.attached {
		return c.cfg.Kubeconfig
	}
	return c.adminKubeconfig()
}

// RESTConfig is the cluster-admin's client configuration; callers may copy
// and change it.
func (c *Cluster) RESTConfig() *rest.Config { return rest.CopyConfig(c.rest) }

// BinDir is the folder holding the cluster's binaries, kubectl among them.
func (c *Cluster) BinDir() string { return c.binDir }

// Version is the Kubernetes release running, e.g. v1.37.2.
func (c *Cluster) Version() Version { return c.version }

// Features are what this version has that the tests depend on.
func (c *Cluster) Features() Features { return c.feat }

// NativeSidecars says whether init containers with restartPolicy Always run
// as sidecars here; where they do not, such a Pod stays Pending.
func (c *Cluster) NativeSidecars() bool { return c.feat.NativeSidecars }

// Stop stops everything Start started, by PID and in reverse order, after
// deleting every Pod through the API so that the kubelet stops them
// gracefully; then it checks that nothing is left (no process, mount,
// folder or cgroup) and removes the state. Calling it again does nothing.
func (c *Cluster) Stop() error {
	c.stopMu.Lock()
	defer c.stopMu.Unlock()
	if c.stopped {
		return nil
	}
	c.stopped = true
	if c.attached {
		c.cfg.Logf("attached: the cluster is left as it was (each test deleted its own namespace)")
		return nil
	}
	start := time.Now()
	var errs []error
	if c.client != nil && c.running("kube-controller-manager") && c.running("kubelet") {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		errs = append(errs, c.deleteEverything(ctx))
		cancel()
	}
	for i := len(c.daemons) - 1; i >= 0; i-- {
		d := c.daemons[i]
		if d.name == "containerd" && d.running() == nil {
			errs = append(errs, criCleanup(c.paths))
		}
		errs = append(errs, d.stop(30*time.Second))
	}
	errs = append(errs, finalCleanup(c.paths, c.cfg.Logf))
	if err := errors.Join(errs...); err != nil {
		return err
	}
	c.cfg.Logf("E2E_TIMING phase=teardown seconds=%.1f", time.Since(start).Seconds())
	c.cfg.Logf("teardown complete: no process, mount, folder or cgroup of the cluster is left")
	return nil
}
