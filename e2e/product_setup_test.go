//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/job-signal/job-signal/e2e/cluster"
	"github.com/job-signal/job-signal/internal/version"
)

// The product's images: the names they are built as, which
// buildProductImages changes to the names Pods give them when they were
// pushed to a registry (kube.ImageRef); Pods use kube.PullPolicy.
var (
	productImage    = "localhost/job-signal:e2e"
	busyboxImage    = cluster.BusyboxImage
	istioProxyImage = "localhost/istio-proxyv2:e2e"
	cloudSQLImage   = "localhost/cloud-sql-proxy:e2e"
	// webhookImage is webhook.Dockerfile's prebuilt target, which the
	// chart's installs run (chartinstall_test.go).
	webhookImage = "localhost/job-signal-webhook:e2e"
)

// Where the layout of manifests/ (docs/layout.md) puts job-signal's
// binaries.
const (
	stateDir = "/var/run/job-signal"
	binDir   = "/var/run/job-signal-bin"
)

// buildProductImages builds job-signal and sidecar-watch as the Dockerfile's
// release stage does (and the webhook and the kubectl plugin, which run here
// as processes), the image from its prebuilt target with buildah, the
// images of the real sidecars and Istio's stand-in, and gets them to the
// nodes (kube.LoadImage). Where images are imported here, the product
// image is also tagged as the release reference (internal/version.Image),
// so a Pod that names it with imagePullPolicy IfNotPresent (a webhook's
// injection) runs this build.
func buildProductImages() error {
	repo, work, bin := filepath.Dir(mustGetwd()), filepath.Join(mustGetwd(), ".work"), workBin()
	if _, err := run(10*time.Minute, "go", "build", "-C", repo, "-trimpath", "-ldflags=-s -w",
		"-o", bin+"/", "./cmd/job-signal", "./cmd/sidecar-watch", "./e2e/standin",
		"./cmd/job-signal-webhook", "./cmd/kubectl-job_signal"); err != nil {
		return err
	}
	context := filepath.Join(work, "image-context")
	if err := os.RemoveAll(context); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(context, "bin"), 0o755); err != nil {
		return err
	}
	for _, name := range []string{"job-signal", "sidecar-watch"} {
		b, err := os.ReadFile(filepath.Join(bin, name))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(context, "bin", name), b, 0o755); err != nil {
			return err
		}
	}
	if err := kube.BuildahBuild(filepath.Join(repo, "Dockerfile"), "prebuilt", context, productImage); err != nil {
		return err
	}
	if kube.Features().LocalImages {
		if err := kube.TagImage(productImage, version.Image); err != nil {
			return err
		}
	}
	if err := buildWebhookImage(repo, work, bin); err != nil {
		return err
	}
	standin, err := os.ReadFile(filepath.Join(bin, "standin"))
	if err != nil {
		return err
	}
	real, err := realSidecarImages()
	if err != nil {
		return err
	}
	for _, img := range append(real, cluster.Image{Ref: istioProxyImage, Entrypoint: []string{"/usr/local/bin/pilot-agent"}, User: "1337:1337",
		Files: []cluster.File{{Name: "usr/local/bin/pilot-agent", Mode: 0o755, Body: standin}}}) {
		if err := kube.LoadImage(img); err != nil {
			return err
		}
	}
	for _, ref := range []*string{&productImage, &busyboxImage, &istioProxyImage, &cloudSQLImage, &nginxImage, &haproxyImage, &webhookImage} {
		*ref = kube.ImageRef(*ref)
	}
	return nil
}

// buildWebhookImage builds webhook.Dockerfile's prebuilt target as
// `make image` does (scripts/image.sh): the static job-signal-webhook of
// bin and this machine's CA certificates, FROM scratch, with buildah.
func buildWebhookImage(repo, work, bin string) error {
	context := filepath.Join(work, "webhook-image-context")
	if err := os.RemoveAll(context); err != nil {
		return err
	}
	for from, to := range map[string]string{
		filepath.Join(bin, "job-signal-webhook"): filepath.Join(context, "bin", "job-signal-webhook"),
		"/etc/ssl/certs/ca-certificates.crt":     filepath.Join(context, "certs", "ca-certificates.crt"),
	} {
		b, err := os.ReadFile(from)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(to, b, 0o755); err != nil {
			return err
		}
	}
	return kube.BuildahBuild(filepath.Join(repo, "webhook.Dockerfile"), "prebuilt", context, webhookImage)
}

// workBin is where buildProductImages puts the programs it builds.
func workBin() string { return filepath.Join(mustGetwd(), ".work", "bin") }

func mustGetwd() string {
	wd, err := os.Getwd() // go test runs in the package folder, e2e/
	if err != nil {
		panic(err)
	}
	return wd
}

// localImage maps an image a manifest names to the local image built here:
// the same program (Istio's is a stand-in); the tag does not matter.
func localImage(ref string) (string, error) {
	repo := ref
	if i := strings.LastIndex(ref, "@"); i >= 0 {
		repo = ref[:i]
	}
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	switch strings.TrimPrefix(repo, "docker.io/") {
	case version.Repository:
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
