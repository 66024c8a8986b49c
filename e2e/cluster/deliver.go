package cluster

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	corev1 "k8s.io/api/core/v1"
)

// How an image the tests build reaches the nodes, decided by the mode:
// imported into the built cluster's containerd; on an attached cluster,
// loaded by the user's command (Config.Load) under its own name, or pushed
// to Config.Registry and named there by digest. Pods then use ImageRef's
// name with PullPolicy's policy.

// deliver hands an image archive ("docker save" format, or OCI on the
// built cluster) holding ref to the nodes.
func (c *Cluster) deliver(archive, ref string) error {
	switch {
	case !c.attached:
		return importImage(c.paths, archive, ref)
	case c.cfg.Load != "":
		// The archive's path is the command's last argument, quoted.
		_, err := run(10*time.Minute, nil, "sh", "-c", c.cfg.Load+` "$1"`, "sh", archive)
		if err != nil {
			return fmt.Errorf("E2E_LOAD, loading %s: %w", ref, err)
		}
		return nil
	default:
		return c.push(archive, ref)
	}
}

// push writes the archive's image to its name below Config.Registry,
// with the credentials docker or podman login saved, and remembers its
// digest reference for ImageRef.
func (c *Cluster) push(archive, ref string) error {
	dst, err := pushName(c.cfg.Registry, ref)
	if err != nil {
		return err
	}
	tag, err := name.NewTag(dst)
	if err != nil {
		return fmt.Errorf("E2E_REGISTRY %q gives image name %q: %w", c.cfg.Registry, dst, err)
	}
	img, err := tarball.ImageFromPath(archive, nil)
	if err != nil {
		return fmt.Errorf("reading the archive of %s: %w", ref, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := remote.Write(tag, img, remote.WithAuthFromKeychain(authn.DefaultKeychain), remote.WithContext(ctx)); err != nil {
		return fmt.Errorf("pushing %s to %s (E2E_REGISTRY): %w", ref, dst, err)
	}
	c.imagesMu.Lock()
	c.images[ref] = tag.Context().Digest(digest.String()).String()
	c.imagesMu.Unlock()
	return nil
}

// pushName is where an image of the suite goes below a registry prefix:
// its repository's last part and its tag, localhost/job-signal:e2e to
// PREFIX/job-signal:e2e.
func pushName(prefix, ref string) (string, error) {
	r, err := name.NewTag(ref)
	if err != nil {
		return "", fmt.Errorf("image %q: %w", ref, err)
	}
	repo := r.RepositoryStr()
	repo = repo[strings.LastIndex(repo, "/")+1:]
	return strings.TrimSuffix(prefix, "/") + "/" + repo + ":" + r.TagStr(), nil
}

// ImageRef is the name Pods give an image the suite built as ref: ref
// itself, or on a cluster fed through Config.Registry, the pushed image by
// digest.
func (c *Cluster) ImageRef(ref string) string {
	c.imagesMu.Lock()
	defer c.imagesMu.Unlock()
	if pushed, ok := c.images[ref]; ok {
		return pushed
	}
	return ref
}

// PullPolicy is the pull policy of the suite's images: Never where they
// were imported or loaded into the nodes, IfNotPresent where the nodes
// pull them (by digest: never a stale one).
func (c *Cluster) PullPolicy() corev1.PullPolicy {
	if c.attached && c.cfg.Registry != "" {
		return corev1.PullIfNotPresent
	}
	return corev1.PullNever
}

// deliveryName says how images reach the nodes, for the log.
func (c *Cluster) deliveryName() string {
	switch {
	case !c.attached:
		return "imported into the node's containerd"
	case c.cfg.Load != "":
		return "loaded by E2E_LOAD: " + c.cfg.Load
	default:
		return "pushed to E2E_REGISTRY " + c.cfg.Registry
	}
}

// imageArchive is where an image's archive is written before delivery.
func imageArchive(p paths, ref, suffix string) string {
	return filepath.Join(p.work, "images", strings.NewReplacer("/", "_", ":", "_").Replace(ref)+suffix)
}
