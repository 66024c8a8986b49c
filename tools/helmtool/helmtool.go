// Package helmtool gives the e2e suite helm, built from the module
// tools/helm at the version its go.mod pins, the way e2e builds
// Kubernetes: once, with the module proxy as the only network, into a
// cache folder named after that module's files, so a new pin builds anew
// and a warm run only looks the binary up. (The chart's own tests render
// and lint in-process: internal/testing/chartrender.)
package helmtool

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"time"
)

// Tools are the built binaries.
type Tools struct {
	Helm string // helm, of the pinned helm.sh/helm/v3
}

var (
	once     sync.Once
	tools    Tools
	buildErr error
)

// Build returns the binaries, building them on the first call of a
// process when the cache does not hold them. repo is the project's root.
func Build(repo string) (Tools, error) {
	once.Do(func() { tools, buildErr = build(repo) })
	return tools, buildErr
}

// cacheRoot is $JOB_SIGNAL_TOOLS_CACHE, else job-signal-tools in the
// user's cache folder (~/.cache).
func cacheRoot() (string, error) {
	if dir := os.Getenv("JOB_SIGNAL_TOOLS_CACHE"); dir != "" {
		return dir, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("helmtool: no cache folder (set JOB_SIGNAL_TOOLS_CACHE): %w", err)
	}
	return filepath.Join(dir, "job-signal-tools"), nil
}

func build(repo string) (Tools, error) {
	module := filepath.Join(repo, "tools", "helm")
	flags, err := ldflags(module)
	if err != nil {
		return Tools{}, err
	}
	key, err := moduleKey(module, flags)
	if err != nil {
		return Tools{}, err
	}
	root, err := cacheRoot()
	if err != nil {
		return Tools{}, err
	}
	dir := filepath.Join(root, "helm-"+key)
	t := Tools{Helm: filepath.Join(dir, "helm")}
	if _, err := os.Stat(t.Helm); err == nil {
		return t, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return Tools{}, err
	}
	// Built into a folder of its own, renamed when complete: a killed build
	// leaves no half binary, and of two builds at once the second rename
	// fails harmlessly.
	tmp, err := os.MkdirTemp(root, "helm-build-")
	if err != nil {
		return Tools{}, err
	}
	defer os.RemoveAll(tmp)
	fmt.Fprintf(os.Stderr, "helmtool: building helm from %s into %s (minutes when cold)\n", module, dir)
	start := time.Now()
	cmd := exec.Command("go", "build", "-C", module, "-trimpath", "-ldflags", flags, "-o", tmp+"/",
		"helm.sh/helm/v3/cmd/helm")
	cmd.Env = append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0", "GOFLAGS=-mod=readonly")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // the tests died: stop building
	if err := cmd.Run(); err != nil {
		return Tools{}, fmt.Errorf("helmtool: go build in %s: %w", module, err)
	}
	fmt.Fprintf(os.Stderr, "helmtool: built in %.1f s\n", time.Since(start).Seconds())
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(t.Helm); statErr != nil {
			return Tools{}, err
		}
	}
	return t, nil
}

// ldflags are those of helm's own Makefile: its version, and the
// Kubernetes version its client libraries are of, which helm template and
// helm lint take as the cluster's when not told (else 1.20, which the
// chart's kubeVersion refuses).
func ldflags(module string) (string, error) {
	gomod, err := os.ReadFile(filepath.Join(module, "go.mod"))
	if err != nil {
		return "", err
	}
	helm := regexp.MustCompile(`(?m)^\s*helm\.sh/helm/v3 (v\S+)`).FindSubmatch(gomod)
	client := regexp.MustCompile(`(?m)^\s*k8s\.io/client-go v0\.(\d+)\.`).FindSubmatch(gomod)
	if helm == nil || client == nil {
		return "", fmt.Errorf("helmtool: %s/go.mod requires no helm.sh/helm/v3 or k8s.io/client-go", module)
	}
	flags := "-s -w -X helm.sh/helm/v3/internal/version.version=" + string(helm[1])
	for _, pkg := range []string{"helm.sh/helm/v3/pkg/lint/rules", "helm.sh/helm/v3/pkg/chartutil"} {
		flags += fmt.Sprintf(" -X %s.k8sVersionMajor=1 -X %s.k8sVersionMinor=%s", pkg, pkg, client[1])
	}
	return flags, nil
}

// moduleKey names a build of the module: a hash of its go.mod, go.sum and
// sources and of the linker flags, so that a new pin, a change of its
// files or of the flags builds anew.
func moduleKey(module, flags string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "ldflags %s\n", flags)
	err := filepath.WalkDir(module, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch filepath.Ext(path) {
		case ".go", ".mod", ".sum":
		default:
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(module, path)
		fmt.Fprintf(h, "%s %d\n", rel, len(data))
		h.Write(data)
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("helmtool: %s: no such module (run from the project's tree)", module)
	}
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}
