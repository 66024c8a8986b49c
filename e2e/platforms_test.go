//go:build e2e || imagecheck

package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestImagePlatforms builds the image as a user does, with `make image`
// (buildah, offline: the prebuilt target per platform), and checks that the
// manifest list holds one image per platform whose binaries are ELF files
// for that platform's machine: arm64 binaries in the arm64 image, not the
// build machine's. It runs in the e2e suite (build tag e2e, as root, where
// the suite installs buildah), and alone, without the suite's cluster, with
//
//	go test -tags imagecheck -run TestImagePlatforms -v ./e2e/
//
// (root and buildah needed). Its buildah storage and archive are its own
// (vfs, in a temporary folder), so it touches none of the suite's paths.
func TestImagePlatforms(t *testing.T) {
	if _, err := exec.LookPath("buildah"); err != nil {
		t.Fatalf("buildah is needed to build the image (apt-get install buildah): %v", err)
	}
	dir := t.TempDir()
	const (
		ref     = "localhost/job-signal:platforms-check"
		version = "v0.0.0-platforms-check"
	)
	archive := filepath.Join(dir, "image.oci.tar")
	buildah := fmt.Sprintf("buildah --storage-driver vfs --root %s --runroot %s",
		filepath.Join(dir, "root"), filepath.Join(dir, "run"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", "-C", "..", "image", "IMAGE="+ref, "VERSION="+version,
		"PLATFORMS=linux/amd64 linux/arm64", "IMAGE_TARGET=prebuilt", "IMAGE_ARCHIVE="+archive,
		"IMAGE_WORK="+filepath.Join(dir, "context"), "BUILDAH="+buildah)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make image: %v\n%s", err, out)
	}
	t.Logf("make image took %.1fs", time.Since(start).Seconds())

	images, err := readOCIArchive(archive, ref)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}
	if len(images) != len(want) {
		t.Errorf("the manifest list holds %d images, want %d (linux/amd64, linux/arm64)", len(images), len(want))
	}
	for _, img := range images {
		machine, ok := want[img.arch]
		if !ok || img.os != "linux" {
			t.Errorf("unexpected platform %s/%s in the list", img.os, img.arch)
			continue
		}
		delete(want, img.arch)
		checkPlatformImage(t, img, machine, version)
	}
	for arch := range want {
		t.Errorf("no linux/%s image in the list", arch)
	}
}

// checkPlatformImage checks one platform's image: its config says the
// platform the list says, and each binary is a static ELF file for machine;
// job-signal carries the stamped version.
func checkPlatformImage(t *testing.T, img platformImage, machine elf.Machine, version string) {
	t.Helper()
	p := img.os + "/" + img.arch
	if img.config.Architecture != img.arch || img.config.OS != img.os {
		t.Errorf("%s: the image's config says %s/%s", p, img.config.OS, img.config.Architecture)
	}
	if got := img.config.Config.Labels["org.opencontainers.image.version"]; got != version {
		t.Errorf("%s: version label %q, want %q", p, got, version)
	}
	for _, name := range []string{"usr/local/bin/job-signal", "usr/local/bin/sidecar-watch"} {
		body, ok := img.files[name]
		if !ok {
			t.Errorf("%s: no /%s in the image", p, name)
			continue
		}
		f, err := elf.NewFile(bytes.NewReader(body))
		if err != nil {
			t.Errorf("%s: /%s is not an ELF file: %v", p, name, err)
			continue
		}
		if f.Machine != machine {
			t.Errorf("%s: /%s is for %v, want %v", p, name, f.Machine, machine)
		}
		for _, prog := range f.Progs {
			if prog.Type == elf.PT_INTERP {
				t.Errorf("%s: /%s is dynamically linked: the image has no libc", p, name)
			}
		}
		// Only what reads internal/version carries the stamp (the linker
		// drops an unused variable): job-signal today.
		if name == "usr/local/bin/job-signal" && !bytes.Contains(body, []byte(version)) {
			t.Errorf("%s: /%s does not carry the stamped version %s", p, name, version)
		}
		t.Logf("%s: /%s: %v, %d bytes", p, name, f.Machine, len(body))
	}
}

// platformImage is one image of a manifest list, read from an OCI archive.
type platformImage struct {
	os, arch string // as the list's platform entry says
	config   ociConfig
	files    map[string][]byte // regular files of every layer, by path without the leading slash
}

type ociDescriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Annotations map[string]string `json:"annotations"`
	Platform    *struct {
		OS           string `json:"os"`
		Architecture string `json:"architecture"`
	} `json:"platform"`
}

type ociConfig struct {
	OS           string `json:"os"`
	Architecture string `json:"architecture"`
	Config       struct {
		Labels map[string]string `json:"Labels"`
	} `json:"config"`
}

// readOCIArchive reads the manifest list named ref from an OCI archive (an
// OCI image layout in a tar file), and every image it lists.
func readOCIArchive(file, ref string) ([]platformImage, error) {
	blobs, err := readTarFiles(file)
	if err != nil {
		return nil, err
	}
	var top struct{ Manifests []ociDescriptor }
	if err := json.Unmarshal(blobs["index.json"], &top); err != nil {
		return nil, fmt.Errorf("%s: index.json: %w", file, err)
	}
	blob := func(digest string) ([]byte, error) {
		b, ok := blobs["blobs/"+strings.Replace(digest, ":", "/", 1)]
		if !ok {
			return nil, fmt.Errorf("%s: no blob %s", file, digest)
		}
		return b, nil
	}
	var list []ociDescriptor
	for _, d := range top.Manifests {
		if d.Annotations["org.opencontainers.image.ref.name"] != ref {
			continue
		}
		b, err := blob(d.Digest)
		if err != nil {
			return nil, err
		}
		var index struct{ Manifests []ociDescriptor }
		if err := json.Unmarshal(b, &index); err != nil {
			return nil, fmt.Errorf("%s: the list %s: %w", file, ref, err)
		}
		list = index.Manifests
	}
	if list == nil {
		return nil, fmt.Errorf("%s: no manifest list named %s", file, ref)
	}
	var images []platformImage
	for _, d := range list {
		if d.Platform == nil {
			return nil, fmt.Errorf("%s: list entry %s has no platform", file, d.Digest)
		}
		img := platformImage{os: d.Platform.OS, arch: d.Platform.Architecture, files: map[string][]byte{}}
		b, err := blob(d.Digest)
		if err != nil {
			return nil, err
		}
		var manifest struct {
			Config ociDescriptor
			Layers []ociDescriptor
		}
		if err := json.Unmarshal(b, &manifest); err != nil {
			return nil, fmt.Errorf("%s: manifest %s: %w", file, d.Digest, err)
		}
		if b, err = blob(manifest.Config.Digest); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &img.config); err != nil {
			return nil, fmt.Errorf("%s: config %s: %w", file, manifest.Config.Digest, err)
		}
		for _, layer := range manifest.Layers {
			if b, err = blob(layer.Digest); err != nil {
				return nil, err
			}
			if err := readLayer(b, layer.MediaType, img.files); err != nil {
				return nil, fmt.Errorf("%s: layer %s: %w", file, layer.Digest, err)
			}
		}
		images = append(images, img)
	}
	return images, nil
}

// readTarFiles returns every regular file of a tar file by name.
func readTarFiles(file string) (map[string][]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	files := map[string][]byte{}
	return files, addTarFiles(f, files)
}

func addTarFiles(r io.Reader, files map[string][]byte) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return err
		}
		files[path.Clean(strings.TrimPrefix(h.Name, "/"))] = b
	}
}

// readLayer adds a layer's regular files to files (later layers win).
func readLayer(b []byte, mediaType string, files map[string][]byte) error {
	var r io.Reader = bytes.NewReader(b)
	switch {
	case strings.HasSuffix(mediaType, "tar+gzip") || strings.HasSuffix(mediaType, "tar.gzip"):
		zr, err := gzip.NewReader(r)
		if err != nil {
			return err
		}
		r = zr
	case strings.HasSuffix(mediaType, ".tar"):
	default:
		return fmt.Errorf("layer media type %s: want an uncompressed or gzip tar", mediaType)
	}
	return addTarFiles(r, files)
}
