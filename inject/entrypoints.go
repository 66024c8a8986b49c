package inject

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// What the known sidecars' images run, read from the files they are built
// from, so that a container of such an image with args only (or with
// nothing) can be injected without asking its registry: the plugin's
// --offline. Each entry holds for the versions whose build files were read
// and for the tags those builds are published under; any other version, tag
// or repository is not known, and is looked up (or, offline, refused) as
// before. The webhook and the plugin online always ask the registry.
//
// An image without an ENTRYPOINT of its own inherits its base image's; one
// that sets ENTRYPOINT starts with no CMD unless it sets one too (the
// Dockerfile reference: "If CMD is defined from the base image, setting
// ENTRYPOINT will reset CMD to an empty value").

// imageBuild is what the build files of one image say it runs, for a
// range of its versions.
type imageBuild struct {
	// repositories are the image's repository paths as published, without
	// the registry host where a mirror keeps the path ("library/nginx"
	// for Docker Hub's official image, which a reference may write
	// "nginx"): a reference matches one exactly or ends with "/" and one.
	repositories []string
	// prefix is what a tag has before the version ("stable-"); a "v"
	// before the version is always allowed.
	prefix string
	// from and through bound the versions read, both included.
	from, through release
	// variants are the suffixes a tag may have after the version and a
	// "-" ("alpine" for 2.14.0-alpine), built from the same ENTRYPOINT.
	variants []string
	// config is the ENTRYPOINT, CMD and STOPSIGNAL the build sets.
	config ImageConfig
	// cmdUnknown: the image's CMD is its base image's, not read here; it
	// serves only containers whose args replace it.
	cmdUnknown bool
	// source names the build files read, in their repositories.
	source string
}

// release is a version's major, minor and patch numbers.
type release [3]int

// imageBuilds are the builds of the known sidecars' images, by the name of
// their row in KnownSidecars. A pull request that adds a version range
// adds the files it read to source.
var imageBuilds = map[string][]imageBuild{
	"cloud-sql-proxy": {
		{
			repositories: []string{"cloudsql-docker/gce-proxy"},
			from:         release{1, 15, 0}, through: release{1, 38, 3},
			variants:   []string{"alpine", "buster", "bullseye", "bookworm"},
			config:     ImageConfig{}, // no ENTRYPOINT: args are the whole command line, from /cloud_sql_proxy
			cmdUnknown: true,
			source: "GoogleCloudPlatform/cloud-sql-proxy v1.15.0 to v1.38.3: Dockerfile, Dockerfile.alpine, Dockerfile.buster, " +
				"Dockerfile.bullseye, Dockerfile.bookworm set no ENTRYPOINT, CMD or STOPSIGNAL, on gcr.io/distroless/base or " +
				"static:nonroot, alpine:3 and debian, which set no ENTRYPOINT either (their CMD, alpine's and debian's shell, is not the proxy)",
		},
		{
			repositories: []string{"cloud-sql-connectors/cloud-sql-proxy"},
			from:         release{2, 0, 0}, through: release{2, 25, 3},
			variants: []string{"alpine", "buster", "bullseye", "bookworm"},
			config:   ImageConfig{Entrypoint: []string{"/cloud-sql-proxy"}},
			source: "GoogleCloudPlatform/cloud-sql-proxy v2.0.0 to v2.25.3: Dockerfile, Dockerfile.alpine, Dockerfile.buster, " +
				"Dockerfile.bullseye, Dockerfile.bookworm: ENTRYPOINT [\"/cloud-sql-proxy\"], no CMD, no STOPSIGNAL",
		},
	},
	"alloydb-auth-proxy": {{
		repositories: []string{"alloydb-connectors/alloydb-auth-proxy"},
		from:         release{0, 6, 0}, through: release{1, 15, 2},
		variants: []string{"alpine", "buster", "bullseye", "bookworm"},
		config:   ImageConfig{Entrypoint: []string{"/alloydb-auth-proxy"}},
		source: "GoogleCloudPlatform/alloydb-auth-proxy v0.6.0 to v1.15.2: Dockerfile, Dockerfile.alpine, Dockerfile.buster, " +
			"Dockerfile.bullseye, Dockerfile.bookworm: ENTRYPOINT [\"/alloydb-auth-proxy\"], no CMD, no STOPSIGNAL",
	}},
	"istio-proxy": {{
		repositories: []string{"istio/proxyv2", "istio-release/proxyv2", "registry.istio.io/release/proxyv2"},
		from:         release{1, 0, 0}, through: release{1, 30, 3},
		variants: []string{"distroless", "debug"},
		config:   ImageConfig{Entrypoint: []string{"/usr/local/bin/pilot-agent"}},
		source: "istio/istio 1.0.0 to 1.30.3: pilot/docker/Dockerfile.proxyv2: ENTRYPOINT [\"/usr/local/bin/pilot-agent\"], " +
			"no CMD, no STOPSIGNAL, for both of its bases (debug and distroless)",
	}},
	"linkerd-proxy": {
		{
			repositories: []string{"linkerd/proxy"},
			prefix:       "stable-",
			from:         release{2, 11, 0}, through: release{2, 14, 10},
			config: ImageConfig{Entrypoint: []string{"/usr/lib/linkerd/linkerd2-proxy-identity"}},
			source: "linkerd/linkerd2 stable-2.11.0 to stable-2.14.10: Dockerfile.proxy: " +
				"ENTRYPOINT [\"/usr/lib/linkerd/linkerd2-proxy-identity\"], no CMD, no STOPSIGNAL",
		},
		{
			repositories: []string{"linkerd/proxy"},
			prefix:       "edge-",
			from:         release{21, 6, 3}, through: release{26, 8, 3},
			config: ImageConfig{Entrypoint: []string{"/usr/lib/linkerd/linkerd2-proxy-identity"}},
			source: "linkerd/linkerd2 edge-21.6.3 to edge-26.8.3: Dockerfile.proxy: " +
				"ENTRYPOINT [\"/usr/lib/linkerd/linkerd2-proxy-identity\"], no CMD, no STOPSIGNAL",
		},
	},
	"oauth2-proxy": {{
		repositories: []string{"oauth2-proxy/oauth2-proxy"},
		from:         release{6, 0, 0}, through: release{7, 15, 3},
		variants: []string{"alpine"},
		config:   ImageConfig{Entrypoint: []string{"/bin/oauth2-proxy"}},
		source:   "oauth2-proxy/oauth2-proxy v6.0.0 to v7.15.3: Dockerfile: ENTRYPOINT [\"/bin/oauth2-proxy\"], no CMD, no STOPSIGNAL",
	}},
	"opentelemetry-collector": {
		{
			repositories: []string{"otel/opentelemetry-collector", "opentelemetry-collector-releases/opentelemetry-collector"},
			from:         release{0, 42, 0}, through: release{0, 159, 0},
			config: ImageConfig{Entrypoint: []string{"/otelcol"}, Cmd: []string{"--config", "/etc/otelcol/config.yaml"}},
			source: "open-telemetry/opentelemetry-collector-releases v0.42.0 to v0.159.0: distributions/otelcol/Dockerfile: " +
				"ENTRYPOINT [\"/otelcol\"], CMD [\"--config\", \"/etc/otelcol/config.yaml\"], no STOPSIGNAL",
		},
		{
			repositories: []string{"otel/opentelemetry-collector-contrib", "opentelemetry-collector-releases/opentelemetry-collector-contrib"},
			from:         release{0, 42, 0}, through: release{0, 159, 0},
			config: ImageConfig{Entrypoint: []string{"/otelcol-contrib"}, Cmd: []string{"--config", "/etc/otelcol-contrib/config.yaml"}},
			source: "open-telemetry/opentelemetry-collector-releases v0.42.0 to v0.159.0: distributions/otelcol-contrib/Dockerfile: " +
				"ENTRYPOINT [\"/otelcol-contrib\"], CMD [\"--config\", \"/etc/otelcol-contrib/config.yaml\"], no STOPSIGNAL",
		},
		{
			repositories: []string{"otel/opentelemetry-collector-k8s", "opentelemetry-collector-releases/opentelemetry-collector-k8s"},
			from:         release{0, 98, 0}, through: release{0, 159, 0},
			config: ImageConfig{Entrypoint: []string{"/otelcol-k8s"}},
			source: "open-telemetry/opentelemetry-collector-releases v0.98.0 to v0.159.0: distributions/otelcol-k8s/Dockerfile: " +
				"ENTRYPOINT [\"/otelcol-k8s\"], no CMD, no STOPSIGNAL",
		},
	},
	"nginx": {{
		repositories: []string{"library/nginx"},
		from:         release{1, 19, 5}, through: release{1, 27, 4},
		variants: []string{"alpine", "alpine-slim", "perl", "alpine-perl", "otel", "alpine-otel", "bookworm", "bullseye", "buster"},
		config:   ImageConfig{Entrypoint: []string{"/docker-entrypoint.sh"}, Cmd: []string{"nginx", "-g", "daemon off;"}, StopSignal: "SIGQUIT"},
		source: "nginxinc/docker-nginx, every {mainline,stable}/*/Dockerfile of NGINX_VERSION 1.19.5 to 1.27.4: " +
			"ENTRYPOINT [\"/docker-entrypoint.sh\"], CMD [\"nginx\", \"-g\", \"daemon off;\"], STOPSIGNAL SIGQUIT " +
			"(1.18.0's were built with SIGTERM and with SIGQUIT)",
	}},
}

// KnownImage is the image configuration of n's image as the known-sidecar
// table holds it, read from the image's build files: what a registry
// would answer, without asking one. ok is false for an image the table
// does not know, a tag that names no version it read (latest, a digest
// alone, a version outside its ranges), and an image whose CMD the
// container's command line would need when it was not read.
func KnownImage(n Need) (cfg ImageConfig, ok bool) {
	k := knownSidecar(n.Image)
	if k == nil {
		return ImageConfig{}, false
	}
	repo, tag := splitReference(n.Image)
	for _, b := range imageBuilds[k.Name] {
		if b.cmdUnknown && n.needsCmd || !matchesRepository(repo, b.repositories) {
			continue
		}
		if b.servesTag(tag) {
			return b.config, true
		}
	}
	return ImageConfig{}, false
}

// splitReference is an image reference's repository, its registry host
// for Docker Hub left out ("docker.io/library/nginx" and "nginx" are both
// "library/nginx"), and its tag ("" when it has none).
func splitReference(image string) (repo, tag string) {
	repo = repository(image)
	if i := strings.IndexByte(image, '@'); i >= 0 {
		image = image[:i]
	}
	if len(image) > len(repo) {
		tag = image[len(repo)+1:]
	}
	for _, hub := range []string{"docker.io/", "index.docker.io/", "registry-1.docker.io/"} {
		repo = strings.TrimPrefix(repo, hub)
	}
	if !strings.Contains(repo, "/") {
		repo = "library/" + repo
	}
	return repo, tag
}

// servesTag says whether tag names a version in the build's range, with
// one of its variants: PREFIX[v]X.Y.Z[-VARIANT].
func (b *imageBuild) servesTag(tag string) bool {
	rest, ok := strings.CutPrefix(tag, b.prefix)
	if !ok {
		return false
	}
	rest = strings.TrimPrefix(rest, "v")
	number, variant, hasVariant := strings.Cut(rest, "-")
	if hasVariant && !slices.Contains(b.variants, variant) {
		return false
	}
	v, ok := parseVersion(number)
	return ok && slices.Compare(v[:], b.from[:]) >= 0 && slices.Compare(v[:], b.through[:]) <= 0
}

// parseVersion reads X.Y.Z, each a decimal number without a sign.
func parseVersion(s string) (release, bool) {
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return release{}, false
	}
	var v release
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || p == "" || p[0] == '+' {
			return release{}, false
		}
		v[i] = n
	}
	return v, true
}

// ImageConfig is what an image says to run when the Pod does not, its
// ENTRYPOINT and CMD, and its STOPSIGNAL, from the image's config in the
// registry.
type ImageConfig struct {
	Entrypoint []string `json:"entrypoint,omitempty"`
	Cmd        []string `json:"cmd,omitempty"`
	StopSignal string   `json:"stopSignal,omitempty"`
}

// NeedsImage reports whether c's command line depends on its image: it has
// no command of its own (only args, or nothing).
func NeedsImage(c *corev1.Container) bool { return len(c.Command) == 0 }

// Effective is the command line the container runs, in the form the
// container's args take (so the kubelet's $(VAR) expansion applies to it
// exactly as before). It follows the rule the kubelet and the container
// runtime apply together:
//
//   - command set: command + args; the image's ENTRYPOINT and CMD are ignored
//     (even when args is empty);
//   - only args set: ENTRYPOINT + args (CMD ignored);
//   - neither: ENTRYPOINT + CMD.
//
// "Set" means non-empty: an empty list is not sent to the runtime at all.
// An ENTRYPOINT of [""] counts as none, as in containerd. The kubelet
// expands $(VAR) in command and args but never in the image's ENTRYPOINT
// and CMD, so the parts taken from the image have '$' doubled ("$$" expands
// to "$"): they reach the process unchanged once moved into args.
func Effective(c *corev1.Container, img *ImageConfig) ([]string, error) {
	if !NeedsImage(c) {
		return slices.Concat(c.Command, c.Args), nil
	}
	if img == nil {
		return nil, errors.New("its image's ENTRYPOINT is needed (the container has no command) but was not looked up")
	}
	var line []string
	if !(len(img.Entrypoint) == 1 && img.Entrypoint[0] == "") {
		line = append(line, escapeAll(img.Entrypoint)...)
	}
	if len(c.Args) > 0 {
		line = append(line, c.Args...)
	} else {
		line = append(line, escapeAll(img.Cmd)...)
	}
	if len(line) == 0 { // the kubelet would fail the container with "no command specified"
		return nil, errors.New("no command: the container has neither command nor args, and its image has neither ENTRYPOINT nor CMD")
	}
	return line, nil
}

// escapeAll protects strings from the kubelet's $(VAR) expansion.
func escapeAll(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = strings.ReplaceAll(s, "$", "$$")
	}
	return out
}
