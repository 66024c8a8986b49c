package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
)

// attachPackages are what building the tests' images needs on this
// machine when the cluster is not built here: busybox for the images'
// shell, buildah for the Dockerfile.
var attachPackages = []string{"busybox-static", "buildah"}

// Attach uses a running cluster, named by cfg.Kubeconfig, instead of
// building one: nothing is started, cleaned or stopped, and nothing of
// /var/lib/job-signal-e2e is touched. Its Features are what its API
// server shows (Version, native sidecars) and no Powers: tests that need
// the node or this machine's loopback skip. The images the tests build
// reach its nodes through cfg.Registry or cfg.Load (exactly one); the
// suite's busybox image is delivered here, as Start loads it.
func Attach(cfg Config) (*Cluster, error) {
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if err := checkDelivery(cfg); err != nil {
		return nil, err
	}
	p, err := newPaths(cfg)
	if err != nil {
		return nil, err
	}
	c := &Cluster{paths: p, cfg: cfg, attached: true, images: map[string]string{}}
	if c.rest, err = clientcmd.BuildConfigFromFlags("", cfg.Kubeconfig); err != nil {
		return nil, fmt.Errorf("E2E_KUBECONFIG %s: %w", cfg.Kubeconfig, err)
	}
	c.rest.QPS, c.rest.Burst = 50, 100 // as Start's: tests poll and watch a lot
	if c.client, err = newAPIClient(c.rest); err != nil {
		return nil, err
	}
	start := time.Now()
	info, err := c.client.Discovery().ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("the cluster of E2E_KUBECONFIG %s (%s) does not answer: %w", cfg.Kubeconfig, c.rest.Host, err)
	}
	minor, err := serverMinor(info.Major, info.Minor)
	if err != nil {
		return nil, fmt.Errorf("the API server at %s: %w", c.rest.Host, err)
	}
	c.version = Version{Kube: info.GitVersion, minor: minor}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.waitNamespaceReady(ctx, metav1.NamespaceDefault); err != nil {
		return nil, fmt.Errorf("namespace default at %s: %w", c.rest.Host, err)
	}
	native, err := c.probeNativeSidecars(ctx)
	if err != nil {
		return nil, err
	}
	c.feat = attachedFeatures(minor, native)
	if c.binDir, err = findKubectl(p, minor); err != nil {
		return nil, err
	}
	if err := mkdirs(p.bin, p.logs); err != nil {
		return nil, err
	}
	pkgs := append(append([]string(nil), attachPackages...), cfg.Packages...)
	if err := c.phase("apt", func() error { return ensurePackages(cfg.Logf, pkgs) }); err != nil {
		return nil, err
	}
	busybox, err := busyboxImageSpec()
	if err != nil {
		return nil, err
	}
	if err := c.LoadImage(busybox); err != nil {
		return nil, err
	}
	cfg.Logf("attached to %s: Kubernetes %s, native sidecars: %v, kubectl %s/kubectl, images %s; %.1f s",
		c.rest.Host, info.GitVersion, native, c.binDir, c.deliveryName(), time.Since(start).Seconds())
	return c, nil
}

// checkDelivery says, naming the variables, when the images would have
// no way to the nodes of an attached cluster.
func checkDelivery(cfg Config) error {
	if cfg.Kubeconfig == "" {
		return errors.New("Attach needs a kubeconfig (E2E_KUBECONFIG, or make e2e KUBECONFIG=PATH)")
	}
	switch {
	case cfg.Registry != "" && cfg.Load != "":
		return errors.New("set one of E2E_REGISTRY and E2E_LOAD, not both: they are two ways for the images to reach the nodes")
	case cfg.Registry == "" && cfg.Load == "":
		return errors.New("on a cluster the suite did not build, say how the images it builds reach the nodes: " +
			"E2E_REGISTRY=host[:port]/path (pushed there with your registry credentials; the nodes must pull from it) " +
			"or E2E_LOAD='kind load image-archive' (a command given each image archive); see e2e/README.md, \"Any cluster\"")
	}
	return nil
}

// serverMinor reads the minor version an API server reports: "37", or
// "29+" as some distributions write it.
func serverMinor(major, minor string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSuffix(minor, "+"))
	if major != "1" || err != nil {
		return 0, fmt.Errorf("reports version %q.%q, not Kubernetes 1.MINOR", major, minor)
	}
	return n, nil
}

// probeNativeSidecars asks the API server, by a dry-run creation, whether
// it keeps an init container's restartPolicy Always: where the
// SidecarContainers gate is off (or unknown) the field is dropped.
func (c *Cluster) probeNativeSidecars(ctx context.Context) (bool, error) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "job-signal-e2e-probe-"},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "sidecar", Image: BusyboxImage, RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}},
			Containers:     []corev1.Container{{Name: "main", Image: BusyboxImage}},
		},
	}
	got, err := c.client.CoreV1().Pods(metav1.NamespaceDefault).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		return false, fmt.Errorf("asking whether native sidecars run (a dry-run Pod in namespace default): %w", err)
	}
	rp := got.Spec.InitContainers[0].RestartPolicy
	return rp != nil && *rp == corev1.ContainerRestartPolicyAlways, nil
}

// findKubectl is the kubectl the tests run on an attached cluster of that
// minor version: the one the suite built for the pinned version nearest to
// it, else the one on PATH.
func findKubectl(p paths, minor int) (string, error) {
	if pinned, err := pinnedVersions(p.repo); err == nil {
		if v, ok := nearestBuilt(pinned, minor, func(v Version) bool {
			_, err := os.Stat(filepath.Join(componentsDir(p, v), "kubectl"))
			return err == nil
		}); ok {
			return componentsDir(p, v), nil
		}
	}
	if path, err := exec.LookPath("kubectl"); err == nil {
		return filepath.Dir(path), nil
	}
	return "", errors.New("no kubectl: put one on PATH (within one minor version of the cluster), " +
		"or build the suite's own cluster once, which caches one (make e2e)")
}

// nearestBuilt is the version, among those built, whose minor is nearest
// to minor (the newer on a tie).
func nearestBuilt(pinned []Version, minor int, built func(Version) bool) (Version, bool) {
	var best Version
	found := false
	for _, v := range pinned {
		if !built(v) {
			continue
		}
		if !found || abs(v.minor-minor) <= abs(best.minor-minor) {
			best, found = v, true
		}
	}
	return best, found
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
