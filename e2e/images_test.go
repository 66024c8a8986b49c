//go:build e2e

package e2e

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

// imageFile is one entry of an image's only layer.
type imageFile struct {
	name string // path in the image, without a leading slash
	mode int64
	body []byte // a regular file's content
	link string // a symbolic link's target
	dir  bool
}

// image is a single-layer image built FROM scratch.
type image struct {
	ref        string // e.g. localhost/busybox:e2e
	files      []imageFile
	entrypoint []string
	cmd        []string
	env        []string
	user       string
}

// writeDockerArchive writes img as "docker save" does: the layer tar, the
// config JSON naming the layer's digest, and manifest.json tying them to
// the image's tag. Enough for "ctr images import"; no registry involved.
func writeDockerArchive(file string, img image) error {
	layer, err := layerTar(img.files)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(layer)
	diffID := "sha256:" + hex.EncodeToString(sum[:])
	config, err := json.Marshal(map[string]any{
		"architecture": runtime.GOARCH,
		"os":           "linux",
		"created":      time.Unix(0, 0).UTC(),
		"config": map[string]any{
			"Entrypoint": img.entrypoint, "Cmd": img.cmd, "Env": img.env, "User": img.user,
		},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{diffID}},
	})
	if err != nil {
		return err
	}
	configSum := sha256.Sum256(config)
	configName := hex.EncodeToString(configSum[:]) + ".json"
	layerName := hex.EncodeToString(sum[:]) + "/layer.tar"
	manifest, err := json.Marshal([]map[string]any{{
		"Config": configName, "RepoTags": []string{img.ref}, "Layers": []string{layerName},
	}})
	if err != nil {
		return err
	}
	var out bytes.Buffer
	tw := tar.NewWriter(&out)
	for _, f := range []struct {
		name string
		body []byte
	}{{configName, config}, {layerName, layer}, {"manifest.json", manifest}} {
		if dir := path.Dir(f.name); dir != "." {
			if err := tw.WriteHeader(&tar.Header{Name: dir + "/", Typeflag: tar.TypeDir, Mode: 0o755}); err != nil {
				return err
			}
		}
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.body))}); err != nil {
			return err
		}
		if _, err := tw.Write(f.body); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return os.WriteFile(file, out.Bytes(), 0o644)
}

// layerTar writes files, and every folder above them, as a layer tar.
func layerTar(files []imageFile) ([]byte, error) {
	entries := map[string]imageFile{}
	for _, f := range files {
		entries[f.name] = f
		for dir := path.Dir(f.name); dir != "."; dir = path.Dir(dir) {
			if _, ok := entries[dir]; !ok {
				entries[dir] = imageFile{name: dir, dir: true, mode: 0o755}
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
		h := &tar.Header{Name: name, Mode: f.mode, ModTime: time.Unix(0, 0)}
		switch {
		case f.dir:
			h.Typeflag, h.Name = tar.TypeDir, name+"/"
		case f.link != "":
			h.Typeflag, h.Linkname = tar.TypeSymlink, f.link
		default:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.body))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.body); err != nil {
			return nil, err
		}
	}
	err := tw.Close()
	return out.Bytes(), err
}

// pauseImageSpec is the sandbox image: the suite's own pause program.
func pauseImageSpec(p paths) (image, error) {
	body, err := os.ReadFile(filepath.Join(p.bin, "pause"))
	if err != nil {
		return image{}, err
	}
	return image{
		ref:        pauseImage,
		files:      []imageFile{{name: "pause", mode: 0o755, body: body}},
		entrypoint: []string{"/pause"},
		user:       "65535:65535",
	}, nil
}

// busyboxFiles are Debian's static busybox with a link for every applet
// where a distribution would put it, and the few files a shell expects.
func busyboxFiles() ([]imageFile, error) {
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
	files := []imageFile{
		{name: "bin/busybox", mode: 0o755, body: body},
		{name: "tmp", mode: 0o1777, dir: true},
		{name: "etc/passwd", mode: 0o644, body: []byte("root:x:0:0:root:/root:/bin/sh\nnonroot:x:65532:65532:nonroot:/home/nonroot:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n")},
		{name: "etc/group", mode: 0o644, body: []byte("root:x:0:\nnonroot:x:65532:\nnobody:x:65534:\n")},
	}
	for _, name := range strings.Fields(string(list)) {
		if name != "bin/busybox" {
			files = append(files, imageFile{name: name, mode: 0o777, link: "/bin/busybox"})
		}
	}
	return files, nil
}

func busyboxImageSpec() (image, error) {
	files, err := busyboxFiles()
	return image{
		ref:   busyboxImage,
		files: files,
		cmd:   []string{"sh"},
		env:   []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
	}, err
}

// loadImage writes img to the work folder and imports it into containerd.
func loadImage(p paths, img image) error {
	dir := filepath.Join(p.work, "images")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	name := strings.NewReplacer("/", "_", ":", "_").Replace(img.ref) + ".tar"
	file := filepath.Join(dir, name)
	if err := writeDockerArchive(file, img); err != nil {
		return err
	}
	return importImage(p, file, img.ref)
}
