//go:build e2e

package e2e

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/job-signal/job-signal/e2e/cluster"
	"github.com/job-signal/job-signal/e2e/registry"
	"github.com/job-signal/job-signal/tools/helmtool"
)

// kube is the cluster every test uses: started once by TestMain, or the
// running one E2E_KUBECONFIG names (see e2e/README.md, "Any cluster").
var kube *cluster.Cluster

// attachTo is the kubeconfig of a running cluster to test instead of
// building one: E2E_KUBECONFIG (make e2e KUBECONFIG=PATH). KUBECONFIG
// itself is not read: one set for other work must not change what the
// suite runs on.
var attachTo = os.Getenv("E2E_KUBECONFIG")

// keep leaves the cluster (and a failed test's namespace) running after
// the tests: E2E_KEEP=1.
var keep = os.Getenv("E2E_KEEP") != ""

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
	// Ctrl-C or a TERM while the tests run: stop what was started first.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	started := make(chan *cluster.Cluster, 1)
	go func() {
		sig := <-sigs
		logf("got %v: tearing down", sig)
		select {
		case c := <-started:
			if err := c.Stop(); err != nil {
				logf("teardown: %v", err)
			}
		default:
		}
		os.Exit(130)
	}()

	// The webhook tests' registry and helm, and the Cloud SQL Auth Proxy: when cold,
	// built while the cluster builds and starts, and done before any test
	// runs (some are timing-sensitive).
	toolsBuilt := make(chan error, 1)
	go cloudSQLProxyBinary()
	c, err := setUp(toolsBuilt)
	if err != nil {
		logf("cluster setup failed: %v", err)
		return 1
	}
	kube = c
	started <- c
	start := time.Now()
	if err := buildProductImages(); err != nil {
		logf("building the product's images: %v", err)
		return stop(1)
	}
	if err := <-toolsBuilt; err != nil {
		logf("building the registry or helm: %v", err)
		return stop(1)
	}
	logf("E2E_TIMING phase=product-images seconds=%.1f", time.Since(start).Seconds())
	logf("Kubernetes %s, native sidecars: %v", c.Version(), c.NativeSidecars())
	logf("cluster up: KUBECONFIG=%s %s/kubectl get nodes", c.Kubeconfig(), c.BinDir())
	code := m.Run()
	if keep && attachTo == "" {
		logf("E2E_KEEP is set: the cluster keeps running (see e2e/README.md); the next run cleans up.\n"+
			"  export KUBECONFIG=%s; %s/kubectl get pods -A", c.Kubeconfig(), c.BinDir())
		return code
	}
	return stop(code)
}

// setUp starts the cluster, with what the webhook tests use built beside
// it (distribution's registry, which they serve on 127.0.0.1, and helm,
// which renders the webhook's chart), or attaches to the running one
// E2E_KUBECONFIG names, where those tests skip.
func setUp(toolsBuilt chan<- error) (*cluster.Cluster, error) {
	if attachTo == "" {
		go func() { toolsBuilt <- buildWebhookTools() }()
		return cluster.Start(cluster.Config{Keep: keep, Logf: logf, Packages: realSidecarPackages})
	}
	toolsBuilt <- nil
	if v := os.Getenv("E2E_K8S_VERSION"); v != "" {
		logf("E2E_K8S_VERSION=%s is not used: the cluster of E2E_KUBECONFIG runs what it runs", v)
	}
	return cluster.Attach(cluster.Config{Kubeconfig: attachTo, Registry: os.Getenv("E2E_REGISTRY"),
		Load: os.Getenv("E2E_LOAD"), Logf: logf, Packages: realSidecarPackages})
}

func buildWebhookTools() error {
	if _, err := registry.Binary(); err != nil {
		return err
	}
	_, err := helmtool.Build(filepath.Dir(mustGetwd()))
	return err
}

// stop tears the cluster down; a teardown that leaves anything fails the run.
func stop(code int) int {
	if err := kube.Stop(); err != nil {
		logf("teardown: %v", err)
		return 1
	}
	return code
}
