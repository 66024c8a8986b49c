//go:build e2e

package e2e

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// debianPackages are what the suite runs: the container runtime, CNI
// plugins, busybox for test images, and buildah for the Dockerfile.
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

// kubeletVersion reads the pinned k8s.io/kubernetes version from the
// kubelet module, the one place it is written.
func kubeletVersion(p paths) (string, error) {
	f, err := os.Open(filepath.Join(p.repo, "e2e", "kubelet", "go.mod"))
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(sc.Text()), "require "))
		if len(fields) >= 2 && fields[0] == "k8s.io/kubernetes" {
			return fields[1], nil
		}
	}
	return "", fmt.Errorf("e2e/kubelet/go.mod does not require k8s.io/kubernetes")
}

// buildKubelet builds the pinned kubelet into the cache folder, unless it
// is already there. Cold, this takes minutes; the Go build cache makes a
// rebuild (a new cache folder, same Go cache) take seconds.
func buildKubelet(p paths, logf func(string, ...any)) (string, error) {
	version, err := kubeletVersion(p)
	if err != nil {
		return "", err
	}
	bin := filepath.Join(p.cache, "kubelet-"+version)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	var major, minor string
	if parts := strings.Split(strings.TrimPrefix(version, "v"), "."); len(parts) >= 2 {
		major, minor = parts[0], parts[1]
	}
	const pkg = "k8s.io/component-base/version"
	ldflags := fmt.Sprintf("-s -w -X %s.gitVersion=%s -X %s.gitMajor=%s -X %s.gitMinor=%s -X %s.gitTreeState=clean",
		pkg, version, pkg, major, pkg, minor, pkg)
	if err := os.MkdirAll(p.cache, 0o755); err != nil {
		return "", err
	}
	logf("building kubelet %s into %s (a few minutes when cold)", version, bin)
	start := time.Now()
	tmp := bin + ".tmp" // renamed when complete: a killed build leaves no half binary
	_, err = run(30*time.Minute, []string{"GOWORK=off", "CGO_ENABLED=0"},
		"go", "build", "-C", filepath.Join(p.repo, "e2e", "kubelet"), "-trimpath",
		"-ldflags", ldflags, "-o", tmp, "k8s.io/kubernetes/cmd/kubelet")
	if err != nil {
		return "", err
	}
	logf("E2E_TIMING kubelet_build_seconds=%.1f", time.Since(start).Seconds())
	return bin, os.Rename(tmp, bin)
}

// buildTools builds the suite's helpers: e2etool (YAML, kustomize, CRI;
// from the kubelet module) and the pause program.
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

// buildProduct builds job-signal and sidecar-watch as the Dockerfile's
// release stage does, for the prebuilt image.
func buildProduct(p paths) error {
	_, err := run(10*time.Minute, []string{"CGO_ENABLED=0"}, "go", "build", "-C", p.repo, "-trimpath",
		"-ldflags=-s -w", "-o", p.bin+"/", "./cmd/job-signal", "./cmd/sidecar-watch")
	return err
}
