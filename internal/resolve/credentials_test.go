package resolve_test

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	corev1 "k8s.io/api/core/v1"
	"time"

	"github.com/job-signal/job-signal/internal/resolve"
)

// TestCacheNeedsOwnCredentials: an image in a private repository, looked
// up by digest with a pull secret (namespace A), is in the cache; the
// same reference looked up without it (namespace B) is refused by the
// registry, not answered from the cache. With the secret again, the
// cache answers (after the registry let it check the digest).
func TestCacheNeedsOwnCredentials(t *testing.T) {
	regHandler := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v2/private/") {
			if user, pass, ok := r.BasicAuth(); !ok || user != "puller" || pass != "s3cret" {
				w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
				http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
				return
			}
		}
		regHandler.ServeHTTP(w, r)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")

	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := img.ConfigFile()
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", "amd64"
	cfg.Config.Entrypoint = []string{"/secret-tool", "--token=from-the-image"}
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		t.Fatal(err)
	}
	tag, _ := name.ParseReference(host + "/private/tool:1")
	if err := remote.Write(tag, img, remote.WithAuth(&authn.Basic{Username: "puller", Password: "s3cret"})); err != nil {
		t.Fatal(err)
	}
	digest, _ := img.Digest()
	byDigest := host + "/private/tool@" + digest.String()

	secret := corev1.Secret{Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{
		corev1.DockerConfigJsonKey: []byte(`{"auths": {"` + host + `": {"username": "puller", "password": "s3cret"}}}`)}}
	withSecret, err := resolve.KeychainFromSecrets([]corev1.Secret{secret})
	if err != nil {
		t.Fatal(err)
	}
	var results []string
	r := resolve.New(nil, 16)
	r.OnLookup = func(result string, _ time.Duration) { results = append(results, result) }
	platform := resolve.Platform{OS: "linux", Architecture: "amd64"}

	for _, ref := range []string{byDigest, host + "/private/tool:1"} {
		got, err := r.Lookup(t.Context(), ref, withSecret, platform)
		if err != nil || got.Entrypoint[0] != "/secret-tool" {
			t.Fatalf("namespace A, with the secret: %q, %v", got.Entrypoint, err)
		}
		got, err = r.Lookup(t.Context(), ref, authn.NewMultiKeychain(authn.DefaultKeychain), platform)
		if err == nil || resolve.Class(err) != resolve.ClassDenied {
			t.Errorf("namespace B, without a secret, got ENTRYPOINT %q (err %v): want the registry's refusal", got.Entrypoint, err)
		}
	}
	if _, err := r.Lookup(t.Context(), byDigest, withSecret, platform); err != nil {
		t.Fatal(err)
	}
	want := []string{resolve.ResultFetched, resolve.ClassDenied, resolve.ResultCached, resolve.ClassDenied, resolve.ResultCached}
	if strings.Join(results, " ") != strings.Join(want, " ") {
		t.Errorf("lookups %q, want %q", results, want)
	}
}
