package inject

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestKnownImage: the known-sidecar table's builds serve the versions,
// tags and repositories their build files were read for, and nothing else.
func TestKnownImage(t *testing.T) {
	v2 := []string{"/cloud-sql-proxy"}
	for _, tc := range []struct {
		image    string
		needsCmd bool
		want     []string // the ENTRYPOINT; nil: not known
		none     bool     // known, with no ENTRYPOINT
	}{
		// Cloud SQL Auth Proxy: v2 runs /cloud-sql-proxy, v1 has no ENTRYPOINT.
		{image: "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14.1", want: v2},
		{image: "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.0.0", want: v2},
		{image: "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.25.3", want: v2},
		{image: "us.gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14.1-alpine", want: v2},
		{image: "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14.1-bookworm@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", want: v2},
		{image: "mirror.example/cache/cloud-sql-connectors/cloud-sql-proxy:v2.8.0", want: v2},
		{image: "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14.1", needsCmd: true, want: v2}, // no CMD: known
		{image: "gcr.io/cloudsql-docker/gce-proxy:1.33.2", none: true},
		{image: "gcr.io/cloudsql-docker/gce-proxy:1.33.2-alpine", none: true},
		{image: "gcr.io/cloudsql-docker/gce-proxy:1.33.2", needsCmd: true}, // its CMD is its base's
		{image: "gcr.io/cloudsql-docker/gce-proxy:1.14.0"},                 // before the Dockerfile read
		{image: "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.99.0"},      // newer than read
		{image: "gcr.io/cloud-sql-connectors/cloud-sql-proxy:3.0.0"},
		{image: "gcr.io/cloud-sql-connectors/cloud-sql-proxy:latest"},
		{image: "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2"},
		{image: "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14"},
		{image: "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14.1-rc.0"},
		{image: "gcr.io/cloud-sql-connectors/cloud-sql-proxy:+2.14.1"},
		{image: "gcr.io/cloud-sql-connectors/cloud-sql-proxy@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
		{image: "gcr.io/cloud-sql-connectors/cloud-sql-proxy"},
		{image: "example.com/someone/cloud-sql-proxy:2.14.1"}, // the row's name, another build
		{image: "gcr.io/cloudsql-docker/gce-proxy:2.14.1"},    // v1's repository, v2's version

		{image: "gcr.io/alloydb-connectors/alloydb-auth-proxy:1.10.1", want: []string{"/alloydb-auth-proxy"}},
		{image: "gcr.io/alloydb-connectors/alloydb-auth-proxy:0.5.0"},

		{image: "docker.io/istio/proxyv2:1.24.0", want: []string{"/usr/local/bin/pilot-agent"}},
		{image: "istio/proxyv2:1.24.0-distroless", want: []string{"/usr/local/bin/pilot-agent"}},
		{image: "gcr.io/istio-release/proxyv2:1.18.2", want: []string{"/usr/local/bin/pilot-agent"}},
		{image: "registry.istio.io/release/proxyv2:1.30.3", want: []string{"/usr/local/bin/pilot-agent"}},
		{image: "registry.istio.io/testing/proxyv2:latest"},
		{image: "example.com/proxyv2:1.24.0"},

		{image: "cr.l5d.io/linkerd/proxy:stable-2.14.10", needsCmd: true, want: []string{"/usr/lib/linkerd/linkerd2-proxy-identity"}},
		{image: "cr.l5d.io/linkerd/proxy:edge-24.11.8", needsCmd: true, want: []string{"/usr/lib/linkerd/linkerd2-proxy-identity"}},
		{image: "cr.l5d.io/linkerd/proxy:stable-2.10.2"},
		{image: "cr.l5d.io/linkerd/proxy:2.14.10"},

		{image: "quay.io/oauth2-proxy/oauth2-proxy:v7.6.0", want: []string{"/bin/oauth2-proxy"}},
		{image: "quay.io/oauth2-proxy/oauth2-proxy:v5.1.1"},

		{image: "otel/opentelemetry-collector-contrib:0.98.0", needsCmd: true, want: []string{"/otelcol-contrib"}},
		{image: "ghcr.io/open-telemetry/opentelemetry-collector-releases/opentelemetry-collector-k8s:0.120.0", want: []string{"/otelcol-k8s"}},

		{image: "nginx:1.25.3", needsCmd: true, want: []string{"/docker-entrypoint.sh"}},
		{image: "docker.io/library/nginx:1.25.3-alpine", want: []string{"/docker-entrypoint.sh"}},
		{image: "mirror.gcr.io/library/nginx:1.27.4", want: []string{"/docker-entrypoint.sh"}},
		{image: "nginx:1.18.0"}, // built with either stop signal
		{image: "bitnami/nginx:1.25.3"},
		{image: "nginxinc/nginx-unprivileged:1.25.3"},

		{image: "registry.example/job:1"},
		{image: "postgres:16.1"},
	} {
		cfg, ok := KnownImage(Need{Container: "c", Image: tc.image, needsCmd: tc.needsCmd})
		switch {
		case tc.want == nil && !tc.none && ok:
			t.Errorf("%s (needs CMD %v): known as %+v, want not known", tc.image, tc.needsCmd, cfg)
		case (tc.want != nil || tc.none) && !ok:
			t.Errorf("%s (needs CMD %v): not known, want ENTRYPOINT %q", tc.image, tc.needsCmd, tc.want)
		case ok && !slices.Equal(cfg.Entrypoint, tc.want):
			t.Errorf("%s: ENTRYPOINT %q, want %q", tc.image, cfg.Entrypoint, tc.want)
		}
	}
}

// TestKnownImageStopSignals: what the table holds of an image's
// STOPSIGNAL is what its build file sets.
func TestKnownImageStopSignals(t *testing.T) {
	for image, want := range map[string]string{
		"nginx:1.25.3": "SIGQUIT",
		"gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14.1": "",
		"istio/proxyv2:1.24.0":                               "",
	} {
		if cfg, ok := KnownImage(Need{Image: image}); !ok || cfg.StopSignal != want {
			t.Errorf("%s: STOPSIGNAL %q (known %v), want %q", image, cfg.StopSignal, ok, want)
		}
	}
}

// TestImageBuildsAreRows: each build belongs to its row of the known
// sidecars, which knows each of its repositories, read the way a
// reference names it, and names where its facts come from.
func TestImageBuildsAreRows(t *testing.T) {
	for row, builds := range imageBuilds {
		for _, b := range builds {
			for _, repo := range b.repositories {
				image := strings.TrimPrefix(repo, "library/") + ":1.0.0"
				if k := knownSidecar(image); k == nil || k.Name != row {
					t.Errorf("%s: repository %s is not known as the row %q (%v)", row, repo, row, k)
				}
			}
			if slices.Compare(b.through[:], b.from[:]) < 0 || !strings.Contains(b.source, "/") || len(b.repositories) == 0 {
				t.Errorf("%s: a build with an empty range, no source file or no repository: %+v", row, b)
			}
			if len(b.config.Entrypoint) == 0 && !b.cmdUnknown && len(b.config.Cmd) == 0 {
				t.Errorf("%s: a build that runs nothing: %+v", row, b)
			}
		}
	}
}

// TestNeedsSaysWhetherCMDCounts: a container with args replaces its
// image's CMD; one with neither command nor args runs it. The v1 proxy's
// args, with no ENTRYPOINT, are its whole command line.
func TestNeedsSaysWhetherCMDCounts(t *testing.T) {
	tmpl := []byte(`{"spec":{"restartPolicy":"Never","containers":[
		{"name":"job","image":"registry.example/job:1"},
		{"name":"proxy","image":"gcr.io/cloudsql-docker/gce-proxy:1.33.2","args":["/cloud_sql_proxy","-instances=p:r:i=tcp:5432"]}]}}`)
	pl, err := Prepare(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, n := range pl.Needs() {
		got[n.Container] = n.needsCmd
	}
	if len(got) != 2 || !got["job"] || got["proxy"] {
		t.Fatalf("Needs() says which needs its CMD: %v, want job true, proxy false", got)
	}
	cfg, ok := KnownImage(Need{Container: "proxy", Image: "gcr.io/cloudsql-docker/gce-proxy:1.33.2"})
	if !ok {
		t.Fatal("v1 not known")
	}
	res, err := pl.Inject(map[string]ImageConfig{"gcr.io/cloudsql-docker/gce-proxy:1.33.2": cfg, "registry.example/job:1": {Entrypoint: []string{"/job"}}}, "installer:1")
	if err != nil {
		t.Fatal(err)
	}
	out, err := Apply(tmpl, res.Ops)
	if err != nil {
		t.Fatal(err)
	}
	var pod struct {
		Spec struct {
			Containers []struct{ Command, Args []string } `json:"containers"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(out, &pod); err != nil {
		t.Fatal(err)
	}
	line := strings.Join(append(pod.Spec.Containers[1].Command, pod.Spec.Containers[1].Args...), " ")
	if !strings.HasPrefix(line, SidecarWatchPath+" ") || !strings.HasSuffix(line, " -- /cloud_sql_proxy -instances=p:r:i=tcp:5432") {
		t.Errorf("the proxy runs %q, want sidecar-watch then its args alone", line)
	}
}
