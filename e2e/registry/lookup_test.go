//go:build e2e

package registry

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/kubectl"
	"github.com/job-signal/job-signal/internal/resolve"
)

// TestLookups: ENTRYPOINT and CMD come back as pushed, for each kind of
// image and for a multi-platform index; a second lookup is answered from
// the cache by digest.
func TestLookups(t *testing.T) {
	reg := Start(t, "", "")
	at := func(repo string) string { return reg.Host + "/" + repo }
	Push(t, at("jobs/entrypoint:1"), Image(t, []string{"/entry", "$(HOME)"}, nil), authn.Anonymous)
	Push(t, at("jobs/cmd:1"), Image(t, nil, []string{"/cmd", "--x"}), authn.Anonymous)
	Push(t, at("jobs/both:1"), Image(t, []string{"/tool"}, []string{"--help"}), authn.Anonymous)
	Push(t, at("jobs/neither:1"), Image(t, nil, nil), authn.Anonymous)
	PushIndex(t, at("jobs/multi:1"), Index(t, map[string]v1.Image{"amd64": Image(t, []string{"/multi"}, nil), "arm64": Image(t, []string{"/multi"}, nil)}))
	PushIndex(t, at("jobs/mixed:1"), Index(t, map[string]v1.Image{"amd64": Image(t, []string{"/amd"}, nil), "arm64": Image(t, []string{"/arm"}, nil)}))

	r := resolve.New(nil, 64)
	any, arm := resolve.Platform{OS: "linux"}, resolve.Platform{OS: "linux", Architecture: "arm64"}
	for _, tc := range []struct {
		image    string
		platform resolve.Platform
		want     inject.ImageConfig
		err      string
	}{
		{"jobs/entrypoint:1", any, inject.ImageConfig{Entrypoint: []string{"/entry", "$(HOME)"}}, ""},
		{"jobs/cmd:1", any, inject.ImageConfig{Cmd: []string{"/cmd", "--x"}}, ""},
		{"jobs/both:1", any, inject.ImageConfig{Entrypoint: []string{"/tool"}, Cmd: []string{"--help"}}, ""},
		{"jobs/neither:1", any, inject.ImageConfig{}, ""},
		{"jobs/multi:1", any, inject.ImageConfig{Entrypoint: []string{"/multi"}}, ""},
		{"jobs/mixed:1", arm, inject.ImageConfig{Entrypoint: []string{"/arm"}}, ""},
		{"jobs/mixed:1", any, inject.ImageConfig{}, "platforms run different commands"},
		{"jobs/missing:1", any, inject.ImageConfig{}, "404 Not Found"},
	} {
		t.Run(tc.image+" "+tc.platform.String(), func(t *testing.T) {
			got, err := r.Lookup(t.Context(), at(tc.image), authn.DefaultKeychain, tc.platform)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Entrypoint, tc.want.Entrypoint) || !slices.Equal(got.Cmd, tc.want.Cmd) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
	hits := r.Hits()
	if _, err := r.Lookup(t.Context(), at("jobs/both:1"), authn.DefaultKeychain, any); err != nil || r.Hits() != hits+1 {
		t.Errorf("second lookup: %v, cache hits %d -> %d", err, hits, r.Hits())
	}
}

// TestPrivateRepository: a registry with basic auth refuses an anonymous
// lookup and answers one with the Pod's pull secret or the Docker config.
func TestPrivateRepository(t *testing.T) {
	reg := Start(t, "puller", "s3cret")
	ref := reg.Host + "/private/app:1"
	Push(t, ref, Image(t, []string{"/app"}, []string{"serve"}), &authn.Basic{Username: "puller", Password: "s3cret"})
	r := resolve.New(nil, 8)
	any := resolve.Platform{OS: "linux"}

	if _, err := r.Lookup(t.Context(), ref, authn.NewMultiKeychain(), any); err == nil || !strings.Contains(err.Error(), "401 Unauthorized") || !strings.Contains(err.Error(), "imagePullSecrets") {
		t.Errorf("anonymous lookup: %v, want 401 and a hint", err)
	}
	secret := corev1.Secret{Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{
		corev1.DockerConfigJsonKey: []byte(`{"auths": {"` + reg.Host + `": {"username": "puller", "password": "s3cret"}}}`)}}
	keychain, err := resolve.KeychainFromSecrets([]corev1.Secret{secret})
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Lookup(t.Context(), ref, keychain, any)
	if err != nil || !slices.Equal(got.Entrypoint, []string{"/app"}) {
		t.Errorf("with the pull secret: %+v, %v", got, err)
	}

	// The plugin uses the Docker config, as docker login writes it.
	dockerConfig := t.TempDir()
	os.WriteFile(filepath.Join(dockerConfig, "config.json"), secret.Data[corev1.DockerConfigJsonKey], 0o600)
	t.Setenv("DOCKER_CONFIG", dockerConfig)
	job := `apiVersion: batch/v1
kind: Job
metadata: {name: app}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: app, image: ` + ref + `, args: [--port=80]}
      - {name: proxy, image: example.com/proxy:1, command: [/proxy]}
`
	var out, stderr bytes.Buffer
	if code := kubectl.Main(context.Background(), []string{"inject", "-f", "-"}, strings.NewReader(job), &out, &stderr); code != 0 {
		t.Fatalf("kubectl job-signal inject: exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(out.String(), `args: [/app, --port=80]`) {
		t.Errorf("the plugin did not use the private image's ENTRYPOINT (CMD dropped):\n%s", out.String())
	}
}

// TestRegistryTimeout: the plugin gives up on a registry that accepts
// connections and never answers, after --registry-timeout, naming the
// container.
func TestRegistryTimeout(t *testing.T) {
	silent := Silent(t)
	job := "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  restartPolicy: Never\n  containers:\n  - {name: app, image: " + silent + "/app:1}\n  - {name: proxy, image: example.com/proxy:1, command: [/proxy]}\n"
	var out, stderr bytes.Buffer
	start := time.Now()
	code := kubectl.Main(context.Background(), []string{"inject", "--registry-timeout", "2s", "-f", "-"}, strings.NewReader(job), &out, &stderr)
	elapsed := time.Since(start)
	if code != 1 || out.Len() > 0 || !strings.Contains(stderr.String(), `container "app"`) || elapsed < 2*time.Second || elapsed > 30*time.Second {
		t.Errorf("exit %d after %s, stdout %d bytes, stderr %s", code, elapsed, out.Len(), stderr.String())
	}
}
