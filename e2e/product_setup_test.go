//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The product's images, built on first use so that the kubelet's own tests
// run even while the product does not build.
const (
	productImage     = "localhost/job-signal:e2e"
	istioProxyImage  = "localhost/istio-proxyv2:e2e"
	cloudSQLImage    = "localhost/cloud-sql-proxy:e2e"
	installDir       = "/var/run/job-signal/bin"
	signalDir        = "/var/run/job-signal"
	jobSignalPath    = installDir + "/job-signal"
	sidecarWatchPath = installDir + "/sidecar-watch"
)

var (
	productOnce sync.Once
	productErr  error
)

// needProduct builds job-signal and sidecar-watch, the image from the
// Dockerfile's prebuilt target, and the stand-in images; a test that needs
// them fails if that did not work.
func needProduct(t *testing.T) {
	t.Helper()
	productOnce.Do(func() {
		start := time.Now()
		productErr = buildProductImages()
		logf("E2E_TIMING product_images_seconds=%.1f", time.Since(start).Seconds())
	})
	if productErr != nil {
		t.Fatalf("building the product's images: %v", productErr)
	}
}

func buildProductImages() error {
	if err := buildProduct(env.paths); err != nil {
		return err
	}
	if err := buildahPrebuilt(env.paths); err != nil {
		return err
	}
	if _, err := run(5*time.Minute, []string{"CGO_ENABLED=0"}, "go", "build", "-C", env.repo, "-trimpath",
		"-ldflags=-s -w", "-o", filepath.Join(env.bin, "standin"), "./e2e/standin"); err != nil {
		return err
	}
	standin, err := os.ReadFile(filepath.Join(env.bin, "standin"))
	if err != nil {
		return err
	}
	for _, img := range []image{
		{ref: istioProxyImage, entrypoint: []string{"/usr/local/bin/pilot-agent"}, user: "1337:1337",
			files: []imageFile{{name: "usr/local/bin/pilot-agent", mode: 0o755, body: standin}}},
		{ref: cloudSQLImage, entrypoint: []string{"/cloud-sql-proxy"}, user: "65532:65532",
			files: []imageFile{{name: "cloud-sql-proxy", mode: 0o755, body: standin}}},
	} {
		if err := loadImage(env.paths, img); err != nil {
			return err
		}
	}
	return nil
}

// buildahPrebuilt builds the Dockerfile's prebuilt target, the release
// image's twin, with buildah (offline: it is FROM scratch) into its own
// storage, and imports it into containerd.
func buildahPrebuilt(p paths) error {
	context := filepath.Join(p.work, "image-context")
	if err := os.RemoveAll(context); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(context, "bin"), 0o755); err != nil {
		return err
	}
	for _, name := range []string{"job-signal", "sidecar-watch"} {
		b, err := os.ReadFile(filepath.Join(p.bin, name))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(context, "bin", name), b, 0o755); err != nil {
			return err
		}
	}
	buildah := []string{"buildah", "--root", filepath.Join(p.buildahDir(), "root"),
		"--runroot", filepath.Join(p.buildahDir(), "run"), "--storage-driver", "vfs"}
	if _, err := run(5*time.Minute, nil, append(buildah, "bud", "--target", "prebuilt",
		"-f", filepath.Join(p.repo, "Dockerfile"), "-t", productImage, context)...); err != nil {
		return err
	}
	archive := filepath.Join(p.work, "images", "job-signal.oci.tar")
	if err := os.MkdirAll(filepath.Dir(archive), 0o755); err != nil {
		return err
	}
	_ = os.Remove(archive) // buildah will not overwrite it
	if _, err := run(5*time.Minute, nil, append(buildah, "push", productImage,
		"oci-archive:"+archive+":"+productImage)...); err != nil {
		return err
	}
	return importImage(p, archive, productImage)
}

// localImage maps an image a manifest names to the local image that stands
// in for it here; the tag does not matter.
func localImage(ref string) (string, error) {
	repo := ref
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		repo = ref[:i]
	}
	switch strings.TrimPrefix(repo, "docker.io/") {
	case "ghcr.io/job-signal/job-signal":
		return productImage, nil
	case "busybox", "library/busybox":
		return busyboxImage, nil
	case "istio/proxyv2":
		return istioProxyImage, nil
	case "gcr.io/cloud-sql-connectors/cloud-sql-proxy":
		return cloudSQLImage, nil
	}
	return "", fmt.Errorf("no local stand-in for image %q: add one in e2e/product_setup_test.go", ref)
}
