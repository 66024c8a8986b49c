package cluster

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// debianPackages are what the cluster runs besides its own builds: the
// container runtime, CNI plugins, busybox for test images, and buildah for
// the Dockerfile.
var debianPackages = []string{"containerd", "runc", "containernetworking-plugins", "busybox-static", "buildah"}

// ensurePackages installs the missing Debian packages, and only those.
func ensurePackages(logf func(string, ...any)) error {
	var missing []string
	for _, pkg := range debianPackages {
		out, err := exec.Command("dpkg-query", "-W", "-f=${Status}", pkg).Output()
		if err != nil || !strings.Contains(string(out), "install ok installed") {
			missing = append(missing, pkg)
		}
	}
	if len(missing) == 0 {
		return nil
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
// module e2e/kubelet: etcd's main package is its server module's root.
var components = []struct{ name, pkg string }{
	{"etcd", "go.etcd.io/etcd/server/v3"},
	{"kube-apiserver", "k8s.io/kubernetes/cmd/kube-apiserver"},
	{"kube-controller-manager", "k8s.io/kubernetes/cmd/kube-controller-manager"},
	{"kube-scheduler", "k8s.io/kubernetes/cmd/kube-scheduler"},
	{"kubelet", "k8s.io/kubernetes/cmd/kubelet"},
	{"kubectl", "k8s.io/kubernetes/cmd/kubectl"},
}

// versions reads the pinned k8s.io/kubernetes and etcd server versions
// from e2e/kubelet/go.mod, the one place they are written.
func versions(p paths) (kube, etcd string, err error) {
	f, err := os.Open(filepath.Join(p.repo, "e2e", "kubelet", "go.mod"))
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(sc.Text()), "require "))
		if len(fields) >= 2 {
			switch fields[0] {
			case "k8s.io/kubernetes":
				kube = fields[1]
			case "go.etcd.io/etcd/server/v3":
				etcd = fields[1]
			}
		}
	}
	if kube == "" || etcd == "" {
		return "", "", fmt.Errorf("e2e/kubelet/go.mod must require k8s.io/kubernetes and go.etcd.io/etcd/server/v3 (found %q, %q)", kube, etcd)
	}
	return kube, etcd, sc.Err()
}

// buildComponents builds every component in one go build (the packages
// they share are compiled once) into a cache folder named after both
// versions, unless it is already there, and returns that folder.
func buildComponents(p paths, logf func(string, ...any)) (string, error) {
	kube, etcd, err := versions(p)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(p.cache, fmt.Sprintf("k8s-%s-etcd-%s", kube, etcd))
	if _, err := os.Stat(filepath.Join(dir, "kubectl")); err == nil {
		return dir, nil
	}
	var major, minor string
	if parts := strings.Split(strings.TrimPrefix(kube, "v"), "."); len(parts) >= 2 {
		major, minor = parts[0], parts[1]
	}
	// Without these the components report v0.0.0, and kubectl warns.
	const pkg = "k8s.io/component-base/version"
	ldflags := fmt.Sprintf("-s -w -X %s.gitVersion=%s -X %s.gitMajor=%s -X %s.gitMinor=%s -X %s.gitTreeState=clean",
		pkg, kube, pkg, major, pkg, minor, pkg)
	tmp := dir + ".tmp" // renamed when complete: a killed build leaves no half folder
	if err := os.RemoveAll(tmp); err != nil {
		return "", err
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return "", err
	}
	logf("building etcd %s and Kubernetes %s into %s (minutes when cold)", etcd, kube, dir)
	argv := []string{"go", "build", "-C", filepath.Join(p.repo, "e2e", "kubelet"), "-trimpath",
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
	return dir, os.Rename(tmp, dir)
}

// buildTools builds the suite's helpers: e2etool (a CRI client, from the
// pinned module) and the pause program.
func buildTools(p paths) error {
	env := []string{"GOWORK=off", "CGO_ENABLED=0"}
	if _, err := run(15*time.Minute, env, "go", "build", "-C", filepath.Join(p.repo, "e2e", "kubelet"),
		"-trimpath", "-o", filepath.Join(p.bin, "e2etool"), "./e2etool"); err != nil {
		return err
	}
	_, err := run(5*time.Minute, env, "go", "build", "-C", p.repo, "-trimpath", "-ldflags=-s -w",
		"-o", filepath.Join(p.bin, "pause"), "./e2e/pause")
	return err
}
