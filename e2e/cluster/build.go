package cluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// debianPackages are what the cluster runs besides its own builds: the
// container runtime, CNI plugins, nftables for the one rule that lets Pods
// reach the API server (network.go), busybox for test images, and buildah
// for the Dockerfiles.
var debianPackages = []string{"containerd", "runc", "containernetworking-plugins", "nftables", "busybox-static", "buildah"}

// ensurePackages installs the missing Debian packages, and only those.
func ensurePackages(logf func(string, ...any), pkgs []string) error {
	var missing []string
	for _, pkg := range pkgs {
		out, err := exec.Command("dpkg-query", "-W", "-f=${Status}", pkg).Output()
		if err != nil || !strings.Contains(string(out), "install ok installed") {
			missing = append(missing, pkg)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("Debian packages %v are missing: install them (apt-get install %s), or run as root", missing, strings.Join(missing, " "))
	}
	logf("installing Debian packages: %v", missing)
	env := []string{"DEBIAN_FRONTEND=noninteractive"}
	install := append([]string{"apt-get", "install", "-y", "--no-install-recommends"}, missing...)
	if _, err := run(15*time.Minute, env, install...); err != nil {
		// Most often the package lists are missing or stale on a new machine.
		if _, err := run(10*time.Minute, env, "apt-get", "update"); err != nil {
			return err
		}
		if _, err := run(15*time.Minute, env, install...); err != nil {
			return err
		}
	}
	return nil
}

// components are the cluster's programs, built together from the pinned
// module of a version: etcd's main package is its server module's root.
var components = []struct{ name, pkg string }{
	{"etcd", "go.etcd.io/etcd/server/v3"},
	{"kube-apiserver", "k8s.io/kubernetes/cmd/kube-apiserver"},
	{"kube-controller-manager", "k8s.io/kubernetes/cmd/kube-controller-manager"},
	{"kube-scheduler", "k8s.io/kubernetes/cmd/kube-scheduler"},
	{"kubelet", "k8s.io/kubernetes/cmd/kubelet"},
	{"kubectl", "k8s.io/kubernetes/cmd/kubectl"},
}

// componentsDir is the cache folder of a version's components.
func componentsDir(p paths, v Version) string {
	return filepath.Join(p.cache, fmt.Sprintf("k8s-%s-etcd-%s", v.Kube, v.Etcd))
}

// buildComponents builds every component in one go build (the packages
// they share are compiled once) into a cache folder named after both
// versions, unless it is already there, and returns that folder.
func buildComponents(p paths, v Version, logf func(string, ...any)) (string, error) {
	kube, etcd := v.Kube, v.Etcd
	dir := componentsDir(p, v)
	if _, err := os.Stat(filepath.Join(dir, "kubectl")); err == nil {
		return dir, nil
	}
	// Without these the components report v0.0.0, and kubectl warns.
	const pkg = "k8s.io/component-base/version"
	ldflags := fmt.Sprintf("-s -w -X %s.gitVersion=%s -X %s.gitMajor=1 -X %s.gitMinor=%d -X %s.gitTreeState=clean",
		pkg, kube, pkg, pkg, v.minor, pkg)
	tmp := dir + ".tmp" // renamed when complete: a killed build leaves no half folder
	if err := os.RemoveAll(tmp); err != nil {
		return "", err
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return "", err
	}
	logf("building etcd %s and Kubernetes %s into %s (minutes when cold)", etcd, kube, dir)
	start := time.Now()
	argv := []string{"go", "build", "-C", v.Module, "-trimpath",
		"-ldflags", ldflags, "-o", tmp + "/"}
	for _, c := range components {
		argv = append(argv, c.pkg)
	}
	if _, err := run(45*time.Minute, []string{"GOWORK=off", "CGO_ENABLED=0"}, argv...); err != nil {
		return "", err
	}
	// go build names a binary after its package's last element, less a
	// major version suffix: etcd's is "server".
	if err := os.Rename(filepath.Join(tmp, "server"), filepath.Join(tmp, "etcd")); err != nil {
		return "", err
	}
	logf("E2E_TIMING components_build kubernetes=%s seconds=%.1f", kube, time.Since(start).Seconds())
	return dir, os.Rename(tmp, dir)
}

// buildTools builds the suite's helpers: e2etool (a CRI client, a module
// of its own) and the pause program.
func buildTools(p paths) error {
	env := []string{"GOWORK=off", "CGO_ENABLED=0"}
	if _, err := run(15*time.Minute, env, "go", "build", "-C", filepath.Join(p.repo, "e2e", "e2etool"),
		"-trimpath", "-o", filepath.Join(p.bin, "e2etool"), "."); err != nil {
		return err
	}
	_, err := run(5*time.Minute, env, "go", "build", "-C", p.repo, "-trimpath", "-ldflags=-s -w",
		"-o", filepath.Join(p.bin, "pause"), "./e2e/pause")
	return err
}
