package kubectl

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/job-signal/job-signal/internal/resolve"
)

// imagesOf are the configs of the public images the shapes name, as
// their registries serve them (ENTRYPOINT, CMD, STOPSIGNAL).
var imagesOf = map[string]v1.Config{
	"gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.18.2": {Entrypoint: []string{"/cloud-sql-proxy"}},
	"nginx:1.27":                     {Entrypoint: []string{"/docker-entrypoint.sh"}, Cmd: []string{"nginx", "-g", "daemon off;"}, StopSignal: "SIGQUIT"},
	"docker.io/istio/proxyv2:1.24.0": {Entrypoint: []string{"/usr/local/bin/pilot-agent"}},
	"hashicorp/vault:1.18":           {Entrypoint: []string{"docker-entrypoint.sh"}, Cmd: []string{"server", "-dev"}},
	"haproxy:3.0":                    {Entrypoint: []string{"docker-entrypoint.sh"}, Cmd: []string{"haproxy", "-f", "/usr/local/etc/haproxy/haproxy.cfg"}, StopSignal: "SIGUSR1"},
	// Looked up by the native form too: the stop signal of a sidecar
	// without a command is its image's.
	"postgres:16":              {Entrypoint: []string{"docker-entrypoint.sh"}, Cmd: []string{"postgres"}, StopSignal: "SIGINT"},
	"bitnami/pgbouncer:1.23.1": {Entrypoint: []string{"/opt/bitnami/scripts/pgbouncer/entrypoint.sh"}, Cmd: []string{"/opt/bitnami/scripts/pgbouncer/run.sh"}},
}

// rewrite sends every registry request to one test registry.
type rewrite struct{ host string }

func (r rewrite) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host = "http", r.host
	return http.DefaultTransport.RoundTrip(req)
}

// testRegistry serves imagesOf from go-containerregistry's registry, on
// 127.0.0.1, and returns options that look images up there.
func testRegistry(t *testing.T) *Options {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	transport := rewrite{u.Host}
	for ref, cfg := range imagesOf {
		img, err := mutate.Config(empty.Image, cfg)
		if err != nil {
			t.Fatal(err)
		}
		r, err := name.ParseReference(ref)
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.Write(r, img, remote.WithTransport(transport)); err != nil {
			t.Fatalf("push %s: %v", ref, err)
		}
	}
	return &Options{Resolver: resolve.New(transport, 16), Keychain: authn.DefaultKeychain}
}
