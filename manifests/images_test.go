package manifests

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/job-signal/job-signal/internal/version"
)

// ourImage matches a reference to our image: the repository, with or
// without a tag or digest.
var goInstall = regexp.MustCompile(`github\.com/job-signal/job-signal/cmd/[A-Za-z0-9_./-]*@([A-Za-z0-9_.+-]+)`)

var ourImage = regexp.MustCompile(`ghcr\.io/job-signal/job-signal(?:-webhook)?(?:[:@][A-Za-z0-9_.:-]+)?`)

// TestImageReferences: the README, every file of manifests/ and the
// kustomize example as kustomize builds it name our image exactly as
// internal/version.Image does (the release's tag), and so does make image's
// default; a user copying any of them gets the same, released image.
func TestImageReferences(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	checked := []source{{name: "README.md", text: readme}}
	err = filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) == ".go" {
			return err
		}
		text, err := os.ReadFile(path)
		checked = append(checked, source{name: filepath.Join("manifests", path), text: text})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range sources(t) {
		if strings.HasPrefix(src.name, "kustomize build") {
			checked = append(checked, src)
		}
	}
	for _, src := range checked {
		refs := ourImage.FindAllString(string(src.text), -1)
		for _, ref := range refs {
			if strings.Contains(ref, "-webhook") {
				if ref != version.WebhookImage {
					t.Errorf("%s names %s: want %s (internal/version.WebhookImage)", src.name, ref, version.WebhookImage)
				}
			} else if ref != version.Image {
				t.Errorf("%s names %s: want %s (internal/version.Image)", src.name, ref, version.Image)
			}
		}
		// Every file that adds job-signal to a Pod names the image.
		if len(refs) == 0 && (src.name == "README.md" || strings.Contains(string(src.text), installName)) {
			t.Errorf("%s names no image of ours: want %s", src.name, version.Image)
		}
	}

	// The README's go install lines name the release, and no other
	// version: @latest and the like mean nothing before it is published.
	installs := goInstall.FindAllStringSubmatch(string(readme), -1)
	if len(installs) == 0 {
		t.Errorf("README.md has no go install line of the release")
	}
	for _, m := range installs {
		if m[1] != version.Release {
			t.Errorf("README.md: go install %s: want @%s (internal/version.Release)", m[0], version.Release)
		}
	}

	out, err := exec.Command("make", "-s", "-C", "..", "image-name").CombinedOutput()
	if err != nil {
		t.Fatalf("make image-name: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != version.Image {
		t.Errorf("make image builds %s by default, want %s (internal/version.Image)", got, version.Image)
	}
}

func TestOurImagePattern(t *testing.T) {
	for text, want := range map[string]string{
		"image: ghcr.io/job-signal/job-signal:v0.1.0\n":  "ghcr.io/job-signal/job-signal:v0.1.0",
		"`ghcr.io/job-signal/job-signal:latest`":         "ghcr.io/job-signal/job-signal:latest",
		"ghcr.io/job-signal/job-signal@sha256:abc123 x":  "ghcr.io/job-signal/job-signal@sha256:abc123",
		"newName: ghcr.io/job-signal/job-signal\n":       "ghcr.io/job-signal/job-signal",
		`"image":"ghcr.io/job-signal/job-signal:v0.1.0"`: "ghcr.io/job-signal/job-signal:v0.1.0",
	} {
		if got := ourImage.FindString(text); got != want {
			t.Errorf("in %q found %q, want %q", text, got, want)
		}
	}
}
