package cluster

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"
)

// File is one entry of an image's only layer.
type File struct {
	Name string // path in the image, without a leading slash
	Mode int64
	Body []byte // a regular file's content
	Link string // a symbolic link's target
	Dir  bool
}

// Image is a single-layer image built FROM scratch, written in "docker
// save" format and imported into the cluster's containerd (LoadImage).
type Image struct {
	Ref        string // e.g. localhost/busybox:e2e
	Files      []File
	Entrypoint []string
	Cmd        []string
	Env        []string
	User       string
	// StopSignal is the signal the runtime stops the container with (a
	// Dockerfile's STOPSIGNAL, e.g. SIGUSR1 for haproxy's image); default
	// SIGTERM.
	StopSignal string
}

// WriteArchive writes img as "docker save" does: the layer tar, the
// config JSON naming the layer's digest, and manifest.json tying them to
// the image's tag. Enough for "ctr images import" (LoadImage), or for
// go-containerregistry's tarball package to push it to a registry.
func WriteArchive(file string, img Image) error {
	layer, err := layerTar(img.Files)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(layer)
	diffID := "sha256:" + hex.EncodeToString(sum[:])
	settings := map[string]any{"Entrypoint": img.Entrypoint, "Cmd": img.Cmd, "Env": img.Env, "User": img.User}
	if img.StopSignal != "" {
		settings["StopSignal"] = img.StopSignal
	}
	config, err := json.Marshal(map[string]any{
		"architecture": runtime.GOARCH,
		"os":           "linux",
		"created":      time.Unix(0, 0).UTC(),
		"config":       settings,
		"rootfs":       map[string]any{"type": "layers", "diff_ids": []string{diffID}},
	})
	if err != nil {
		return err
	}
	configSum := sha256.Sum256(config)
	configName := hex.EncodeToString(configSum[:]) + ".json"
	layerName := hex.EncodeToString(sum[:]) + "/layer.tar"
	manifest, err := json.Marshal([]map[string]any{{
		"Config": configName, "RepoTags": []string{img.Ref}, "Layers": []string{layerName},
	}})
	if err != nil {
		return err
	}
	var out bytes.Buffer
	tw := tar.NewWriter(&out)
	for _, f := range []struct {
		Name string
		Body []byte
	}{{configName, config}, {layerName, layer}, {"manifest.json", manifest}} {
		if dir := path.Dir(f.Name); dir != "." {
			if err := tw.WriteHeader(&tar.Header{Name: dir + "/", Typeflag: tar.TypeDir, Mode: 0o755}); err != nil {
				return err
			}
		}
		if err := tw.WriteHeader(&tar.Header{Name: f.Name, Mode: 0o644, Size: int64(len(f.Body))}); err != nil {
			return err
		}
		if _, err := tw.Write(f.Body); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return os.WriteFile(file, out.Bytes(), 0o644)
}

// layerTar writes files, and every folder above them, as a layer tar.
func layerTar(files []File) ([]byte, error) {
	entries := map[string]File{}
	for _, f := range files {
		entries[f.Name] = f
		for dir := path.Dir(f.Name); dir != "."; dir = path.Dir(dir) {
			if _, ok := entries[dir]; !ok {
				entries[dir] = File{Name: dir, Dir: true, Mode: 0o755}
			}
		}
	}
	names := make([]string, 0, len(entries))
	for name := range entries {
		names = append(names, name)
	}
	sort.Strings(names) // parents before children
	var out bytes.Buffer
	tw := tar.NewWriter(&out)
	for _, name := range names {
		f := entries[name]
		h := &tar.Header{Name: name, Mode: f.Mode, ModTime: time.Unix(0, 0)}
		switch {
		case f.Dir:
			h.Typeflag, h.Name = tar.TypeDir, name+"/"
		case f.Link != "":
			h.Typeflag, h.Linkname = tar.TypeSymlink, f.Link
		default:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.Body))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.Body); err != nil {
			return nil, err
		}
	}
	err := tw.Close()
	return out.Bytes(), err
}

// pauseImageSpec is the sandbox image: the suite's own pause program.
func pauseImageSpec(p paths) (Image, error) {
	body, err := os.ReadFile(filepath.Join(p.bin, "pause"))
	if err != nil {
		return Image{}, err
	}
	return Image{
		Ref:        PauseImage,
		Files:      []File{{Name: "pause", Mode: 0o755, Body: body}},
		Entrypoint: []string{"/pause"},
		User:       "65535:65535",
	}, nil
}

// BusyboxFiles are Debian's static busybox with a link for every applet
// where a distribution would put it, and the few files a shell expects:
// the files of BusyboxImage, to build other images on.
func BusyboxFiles() ([]File, error) {
	bin, err := exec.LookPath("busybox")
	if err != nil {
		return nil, err
	}
	body, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	list, err := exec.Command(bin, "--list-full").Output()
	if err != nil {
		return nil, fmt.Errorf("busybox --list-full: %w", err)
	}
	files := []File{
		{Name: "bin/busybox", Mode: 0o755, Body: body},
		{Name: "tmp", Mode: 0o1777, Dir: true},
		{Name: "etc/passwd", Mode: 0o644, Body: []byte("root:x:0:0:root:/root:/bin/sh\nnonroot:x:65532:65532:nonroot:/home/nonroot:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n")},
		{Name: "etc/group", Mode: 0o644, Body: []byte("root:x:0:\nnonroot:x:65532:\nnobody:x:65534:\n")},
	}
	for _, name := range strings.Fields(string(list)) {
		if name != "bin/busybox" {
			files = append(files, File{Name: name, Mode: 0o777, Link: "/bin/busybox"})
		}
	}
	return files, nil
}

func busyboxImageSpec() (Image, error) {
	files, err := BusyboxFiles()
	return Image{
		Ref:   BusyboxImage,
		Files: files,
		Cmd:   []string{"sh"},
		Env:   []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
	}, err
}

// writeImage writes img's archive to the work folder and returns its path.
func writeImage(p paths, img Image) (string, error) {
	file := imageArchive(p, img.Ref, ".tar")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return "", err
	}
	return file, WriteArchive(file, img)
}

// loadImage writes img to the work folder and imports it into containerd.
func loadImage(p paths, img Image) error {
	file, err := writeImage(p, img)
	if err != nil {
		return err
	}
	return importImage(p, file, img.Ref)
}

// buildahBuild builds a Dockerfile's target with buildah (offline: the
// target must be FROM scratch or FROM an earlier stage of its own) into
// storage of its own below root, and writes it as an archive: OCI, or
// "docker save" format (which a registry push reads too) when docker is
// set. It returns the archive's path.
func buildahBuild(p paths, root string, docker bool, dockerfile, target, context, ref string) (string, error) {
	buildah := []string{"buildah", "--root", filepath.Join(root, "root"),
		"--runroot", filepath.Join(root, "run"), "--storage-driver", "vfs"}
	if _, err := run(5*time.Minute, nil, append(buildah, "bud", "--target", target,
		"-f", dockerfile, "-t", ref, context)...); err != nil {
		return "", err
	}
	suffix, transport := ".oci.tar", "oci-archive:"
	if docker {
		suffix, transport = ".docker.tar", "docker-archive:"
	}
	archive := imageArchive(p, ref, suffix)
	if err := os.MkdirAll(filepath.Dir(archive), 0o755); err != nil {
		return "", err
	}
	_ = os.Remove(archive) // buildah will not overwrite it
	if _, err := run(5*time.Minute, nil, append(buildah, "push", ref, transport+archive+":"+ref)...); err != nil {
		return "", err
	}
	return archive, nil
}
