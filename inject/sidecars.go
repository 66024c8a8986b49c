package inject

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// KnownSidecar is what job-signal knows about a program people run beside
// a job: whether it can ever be the job, how it says it is ready, how it
// is asked to quit, and its graceful stop signal. README's table lists the
// same; a pull request adds a row here, a case in sidecars_test.go and, if
// the program runs offline, a case in sidecars_real_test.go.
type KnownSidecar struct {
	Name string
	// Images are repository names (the part of the image reference before
	// the tag or digest): a reference matches when its repository is one
	// of them or ends with "/" and one of them.
	Images []string
	// Sidecar: never the job, so never chosen as the main container.
	// Programs that also run jobs (postgres for psql, vault for its CLI)
	// say only how they stop.
	Sidecar bool
	// SidecarWhen, if set, must be one of the words of the command line
	// for the container to count as this sidecar (vault's "agent").
	SidecarWhen string
	// Ready is the readiness endpoint it serves, Quit the endpoint that
	// makes it exit; either may need a flag or variable to exist.
	Ready, Quit Endpoint
	// StopSignal is its graceful stop, when it is not TERM.
	StopSignal string
	// StopsPromptly: it ends within a few seconds of its stop signal,
	// whatever its peers do, so that as a native sidecar, stopped by the
	// kubelet, it does not hold the Pod up to terminationGracePeriodSeconds
	// (the pair kills a sidecar after its --grace). false when it is known
	// to wait longer, or not known.
	StopsPromptly bool
	// NetworkProxy: a mesh's proxy, to which the mesh's init container (or
	// CNI plugin) redirects the Pod's traffic, the kubelet's probes of the
	// other containers among it: they cannot pass before it runs, so as
	// native sidecars it starts first.
	NetworkProxy bool
	// ProbePorts are ports it serves other containers' probes on, beyond
	// its containerPorts (the mesh rewrites their probes to them).
	ProbePorts []int32
	// Source says where these facts come from.
	Source string
}

// Endpoint is an HTTP endpoint of a sidecar on the Pod's loopback.
type Endpoint struct {
	Path string // "" when there is none
	// Port is the default port; PortFlag the flag that changes it.
	Port     int
	PortFlag string
	// AddrFlag is a flag giving HOST:PORT (or a URL) instead.
	AddrFlag string
	// EnabledBy is a flag (--name) or an environment variable
	// (NAME=value) without which the endpoint does not exist.
	EnabledBy string
}

// KnownSidecars is the table. Order matters only for documentation.
var KnownSidecars = []KnownSidecar{
	{
		Name: "cloud-sql-proxy", Sidecar: true,
		Images:        []string{"cloud-sql-proxy", "cloudsql-proxy", "gce-proxy", "cloud-sql-connectors/cloud-sql-proxy"},
		Ready:         Endpoint{Path: "/startup", Port: 9090, PortFlag: "--http-port", EnabledBy: "--health-check"},
		Quit:          Endpoint{Path: "/quitquitquit", Port: 9091, PortFlag: "--admin-port", EnabledBy: "--quitquitquit"},
		Source:        "cloud-sql-proxy v2 --help: --health-check serves /startup on --http-address:--http-port (localhost:9090); --quitquitquit serves POST /quitquitquit on localhost:--admin-port (9091); run here against v2.27.0",
		StopsPromptly: true, // REAL-SIDECARS.md: TERM → exit 143 within 10 ms (unless --max-sigterm-delay)
	},
	{
		Name: "alloydb-auth-proxy", Sidecar: true,
		Images:        []string{"alloydb-auth-proxy", "alloydb-connectors/alloydb-auth-proxy"},
		Ready:         Endpoint{Path: "/startup", Port: 9090, PortFlag: "--http-port", EnabledBy: "--health-check"},
		Quit:          Endpoint{Path: "/quitquitquit", Port: 9091, PortFlag: "--admin-port", EnabledBy: "--quitquitquit"},
		Source:        "alloydb-auth-proxy --help: the same admin and health flags as cloud-sql-proxy v2; run here against v1.17.1",
		StopsPromptly: true, // as cloud-sql-proxy
	},
	{
		Name: "istio-proxy", Sidecar: true,
		Images:       []string{"proxyv2", "istio/proxyv2"},
		Ready:        Endpoint{Path: "/healthz/ready", Port: 15021},
		Quit:         Endpoint{Path: "/quitquitquit", Port: 15020, PortFlag: "--statusPort"},
		Source:       "istio: pilot-agent serves /healthz/ready on 15021 and POST /quitquitquit on its status port (--statusPort, 15020), the documented way to end the proxy of a Job",
		NetworkProxy: true, ProbePorts: []int32{15020, 15021},
		// pilot-agent on TERM drains for terminationDrainDuration (5s by
		// default: istio pkg/envoy/agent.go, pkg/config/mesh/mesh.go), then
		// exits; istio-init's iptables rules redirect every inbound port but
		// 15090, 15021 and 15020, and the injector rewrites the other
		// containers' probes to 15020 /app-health/NAME/readyz
		// (pkg/kube/inject/app_probe.go).
		StopsPromptly: true,
	},
	{
		Name: "linkerd-proxy", Sidecar: true,
		Images:       []string{"linkerd/proxy", "linkerd2-proxy", "linkerd-proxy"},
		Ready:        Endpoint{Path: "/ready", Port: 4191},
		Quit:         Endpoint{Path: "/shutdown", Port: 4191, EnabledBy: "LINKERD2_PROXY_SHUTDOWN_ENDPOINT_ENABLED=true"},
		Source:       "linkerd2-proxy: admin server on 4191 serves /ready; POST /shutdown exists only with LINKERD2_PROXY_SHUTDOWN_ENDPOINT_ENABLED=true (off by default since linkerd2-proxy PR 3014)",
		NetworkProxy: true, ProbePorts: []int32{4191},
		// On TERM it refuses new requests and exits once those in flight end
		// (linkerd's graceful-shutdown documentation); linkerd-init redirects
		// every inbound port but the proxy's own (4190, 4191).
		StopsPromptly: true,
	},
	{
		Name: "envoy", Sidecar: true,
		Images:        []string{"envoy", "envoyproxy/envoy", "envoyproxy/envoy-distroless"},
		Source:        "envoy: its admin listener (/ready, POST /quitquitquit) is set in the bootstrap file, not in args: annotate ready-http and quit-url",
		StopsPromptly: true, // TERM: envoy closes its connections and exits at once
	},
	{
		Name: "vault-agent", Sidecar: true, SidecarWhen: "agent",
		Images: []string{"vault", "hashicorp/vault"},
		Source: "vault agent: /agent/v1/quit exists only with agent_api { enable_quit = true } in its configuration file: annotate quit-url; `vault` without `agent` is the CLI, which can be the job",
	},
	{
		Name: "fluent-bit", Sidecar: true,
		Images:        []string{"fluent-bit", "fluent/fluent-bit"},
		Source:        "fluent-bit: TERM flushes and exits within its Grace setting (5s); its HTTP server is configured in its file",
		StopsPromptly: true, // within Grace, 5s by default
	},
	{
		Name: "fluentd", Sidecar: true,
		Images: []string{"fluentd", "fluent/fluentd", "fluentd-kubernetes-daemonset", "fluent/fluentd-kubernetes-daemonset"},
		Source: "fluentd: TERM and INT stop it gracefully, flushing buffers (for as long as its outputs take: not known to be prompt)",
	},
	{
		Name: "oauth2-proxy", Sidecar: true,
		Images: []string{"oauth2-proxy", "oauth2-proxy/oauth2-proxy"},
		Ready:  Endpoint{Path: "/ping", Port: 4180, AddrFlag: "--http-address"},
		Source: "oauth2-proxy: /ping answers 200 on --http-address (127.0.0.1:4180)",
	},
	{
		Name: "opentelemetry-collector", Sidecar: true,
		Images: []string{"opentelemetry-collector", "opentelemetry-collector-contrib", "opentelemetry-collector-k8s", "otel/opentelemetry-collector", "otel/opentelemetry-collector-contrib", "otel/opentelemetry-collector-k8s"},
		Source: "otel collector: TERM shuts it down gracefully; the health_check extension (13133) is set in its configuration file",
	},
	{
		Name: "kuma-sidecar", Sidecar: true,
		Images:       []string{"kuma-dp", "kumahq/kuma-dp", "kuma/kuma-dp"},
		Source:       "kuma: kuma-dp is the kuma-sidecar container its injector adds (pkg/plugins/runtime/k8s/containers/factory.go), with a readinessProbe /ready on the admin port (9901); kuma-init or the CNI redirects the Pod's traffic to it; probes are rewritten to its application probe proxy (9001, 9000 before); on TERM it drains for --drain-time (30s by default: app/kuma-dp/cmd/run.go) before it exits",
		NetworkProxy: true, ProbePorts: []int32{9000, 9001, 9901, 9902},
	},
	{
		Name: "consul-dataplane", Sidecar: true,
		Images:       []string{"consul-dataplane", "hashicorp/consul-dataplane"},
		Source:       "consul-k8s: the consul-dataplane container its connect injector adds (control-plane/connect-inject/webhook/consul_dataplane_sidecar.go), with a readinessProbe on its inbound port (20000) or proxy health port (21000); transparent proxy redirects the Pod's traffic to it and rewrites probes to its exposed-path ports (20300-20599); on TERM it waits its proxy lifecycle's shutdown grace period (30s by default)",
		NetworkProxy: true, ProbePorts: []int32{20000, 21000},
	},
	{
		Name: "pgbouncer", Sidecar: true,
		Images:        []string{"pgbouncer", "bitnami/pgbouncer", "edoburu/pgbouncer"},
		StopSignal:    "INT",
		Source:        "pgbouncer: INT is its safe shutdown (waits for queries), TERM its immediate one (exit 1); run here against 1.18",
		StopsPromptly: true, // on its stop signal, REAL-SIDECARS.md
	},
	{
		Name: "nginx", Images: []string{"nginx", "nginx-unprivileged", "nginxinc/nginx-unprivileged"},
		StopSignal:    "QUIT",
		Source:        "nginx: QUIT is its graceful shutdown (the official image's STOPSIGNAL), TERM cuts requests in flight; run here against 1.22",
		StopsPromptly: true, // on its stop signal, REAL-SIDECARS.md
	},
	{
		Name: "haproxy", Images: []string{"haproxy", "haproxytech/haproxy-alpine", "haproxytech/haproxy-debian"},
		StopSignal:    "USR1",
		Source:        "haproxy: USR1 is its soft stop (the official image's STOPSIGNAL), TERM a hard stop; run here against 2.6",
		StopsPromptly: true, // on its stop signal, REAL-SIDECARS.md
	},
	{
		Name: "postgres", Images: []string{"postgres", "postgresql", "bitnami/postgresql"},
		StopSignal:    "INT",
		Source:        "postgres: INT is its fast shutdown, TERM a smart one that waits for every session; run here against 15",
		StopsPromptly: true, // on its stop signal, REAL-SIDECARS.md
	},
}

// repository is the image reference without its tag or digest, and
// without a registry host that has a dot or a port.
func repository(image string) string {
	if i := strings.IndexByte(image, '@'); i >= 0 {
		image = image[:i]
	}
	if i := strings.LastIndexByte(image, ':'); i >= 0 && !strings.Contains(image[i:], "/") {
		image = image[:i]
	}
	return image
}

// knownSidecar finds the table's row for an image; nil when none
// matches.
func knownSidecar(image string) *KnownSidecar {
	repo := repository(image)
	for i := range KnownSidecars {
		if matchesRepository(repo, KnownSidecars[i].Images) {
			return &KnownSidecars[i]
		}
	}
	return nil
}

// matchesRepository says whether repo is one of patterns or ends with "/"
// and one of them.
func matchesRepository(repo string, patterns []string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return repo == p || strings.HasSuffix(repo, "/"+p) })
}

// sidecarOf says which sidecar a container surely is, "" when it may be
// the job: a known sidecar's image (with its command, for rows such as
// vault's), or a name that says so.
func sidecarOf(c *corev1.Container, k *KnownSidecar) string {
	switch {
	case k.isSidecar(slices.Concat(c.Command, c.Args)):
		return k.Name
	case sidecarNamedSo(c.Name):
		return "named so"
	}
	return ""
}

// sidecarNamedSo says whether a container's name says it is a sidecar:
// "sidecar", "proxy", NAME-sidecar, or the name a known sidecar's
// container gets where meshes and charts add it (istio-proxy,
// linkerd-proxy, cloud-sql-proxy, ...). A name that only resembles one
// (build-proxy) is no evidence: a job may well be called so.
func sidecarNamedSo(name string) bool {
	return name == "sidecar" || name == "proxy" || strings.HasSuffix(name, "-sidecar") ||
		slices.ContainsFunc(KnownSidecars, func(k KnownSidecar) bool { return k.Sidecar && k.Name == name })
}

// isSidecar says whether the row makes this container a sidecar for sure.
func (k *KnownSidecar) isSidecar(line []string) bool {
	if k == nil || !k.Sidecar {
		return false
	}
	if k.SidecarWhen == "" {
		return true
	}
	return slices.ContainsFunc(line, func(w string) bool { return slices.Contains(strings.Fields(w), k.SidecarWhen) })
}
