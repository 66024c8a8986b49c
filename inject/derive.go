package inject

import (
	"fmt"
	"net"
	"path"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/job-signal/job-signal/signalfs/sidecarspec"
)

// derived is a sidecar setting read from the manifest or the image rather
// than from an annotation, and where it came from (for messages).
type derived struct {
	key, value, from string
}

// readinessFromProbes turns the container's readinessProbe (else its
// startupProbe) into --ready-http, --ready-tcp or --ready-exec. A probe sidecar-watch
// cannot run is an error that says why and which annotation to set
// instead; no probe is no setting.
func readinessFromProbes(c *corev1.Container) (*derived, error) {
	probe, field := c.ReadinessProbe, "readinessProbe"
	if probe == nil {
		probe, field = c.StartupProbe, "startupProbe"
	}
	if probe == nil {
		return nil, nil
	}
	where := fmt.Sprintf("container %q: %s", c.Name, field)
	instead := fmt.Sprintf("set %sready-tcp.%s (or ready-http, ready-file, ready-exec) to say when it is ready", Prefix, c.Name)
	switch h := probe.ProbeHandler; {
	case h.HTTPGet != nil:
		g := h.HTTPGet
		if g.Scheme == corev1.URISchemeHTTPS {
			return nil, fmt.Errorf("%s is https, and sidecar-watch probes plain http only: %s", where, instead)
		}
		if len(g.HTTPHeaders) > 0 {
			return nil, fmt.Errorf("%s sends headers, which sidecar-watch cannot: %s", where, instead)
		}
		port, err := probePort(c, g.Port)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		p := g.Path
		if !strings.HasPrefix(p, "/") {
			p = "/" + p
		}
		url := "http://" + net.JoinHostPort(probeHost(g.Host), port) + p
		if _, err := sidecarspec.HTTPURL(url); err != nil {
			return nil, fmt.Errorf("%s gives %s: %w; %s", where, url, err, instead)
		}
		return &derived{"ready-http", url, where}, nil
	case h.TCPSocket != nil:
		port, err := probePort(c, h.TCPSocket.Port)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		addr := net.JoinHostPort(probeHost(h.TCPSocket.Host), port)
		if _, err := sidecarspec.TCPAddr(addr); err != nil {
			return nil, fmt.Errorf("%s gives %s: %w; %s", where, addr, err, instead)
		}
		return &derived{"ready-tcp", addr, where}, nil
	case h.Exec != nil:
		// The kubelet runs the command in the container, without a shell;
		// sidecar-watch runs it there too, as a JSON array (exact words).
		if len(h.Exec.Command) == 0 {
			return nil, fmt.Errorf("%s: exec has no command: want a command such as [pg_isready, -h, 127.0.0.1]; %s", where, instead)
		}
		b, err := marshal(h.Exec.Command)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if _, err := sidecarspec.Exec(string(b)); err != nil {
			return nil, fmt.Errorf("%s: %w; %s", where, err, instead)
		}
		return &derived{"ready-exec", string(b), where}, nil
	case h.GRPC != nil:
		return nil, fmt.Errorf("%s is a gRPC health check, which sidecar-watch cannot run: %s (its port %d accepts TCP)", where, instead, h.GRPC.Port)
	}
	return nil, nil
}

// probeHost is where sidecar-watch, inside the Pod, reaches the port the
// kubelet probes: the kubelet's default is the Pod's IP, which the
// loopback reaches too.
func probeHost(host string) string {
	if host == "" {
		return "127.0.0.1"
	}
	return host
}

// probePort resolves a probe's port, a number or the name of one of the
// container's ports.
func probePort(c *corev1.Container, port intstr.IntOrString) (string, error) {
	if port.Type == intstr.Int {
		return strconv.Itoa(int(port.IntVal)), nil
	}
	if n, err := strconv.Atoi(port.StrVal); err == nil {
		return strconv.Itoa(n), nil
	}
	for _, p := range c.Ports {
		if p.Name == port.StrVal {
			return strconv.Itoa(int(p.ContainerPort)), nil
		}
	}
	return "", fmt.Errorf("port %q is not the name of one of the container's ports", port.StrVal)
}

// fromTable reads an endpoint of a known sidecar from its command line and
// environment: nil when the endpoint does not exist there.
func fromTable(e Endpoint, line []string, env []corev1.EnvVar) string {
	if e.Path == "" || !enabled(e.EnabledBy, line, env) {
		return ""
	}
	host, port := "127.0.0.1", strconv.Itoa(e.Port)
	if v, ok := flagValue(line, e.PortFlag); ok {
		port = v
	}
	if v, ok := flagValue(line, e.AddrFlag); ok {
		v = strings.TrimPrefix(strings.TrimPrefix(v, "http://"), "https://")
		if h, p, err := net.SplitHostPort(strings.TrimSuffix(v, "/")); err == nil {
			host, port = loopback(h), p
		}
	}
	return "http://" + net.JoinHostPort(host, port) + e.Path
}

// loopback is the address sidecar-watch uses for a listen address.
func loopback(host string) string {
	switch host {
	case "", "0.0.0.0", "::", "localhost":
		return "127.0.0.1"
	}
	return host
}

// enabled says whether the flag (--name) or variable (NAME=value) that an
// endpoint needs is set; "" needs nothing.
func enabled(by string, line []string, env []corev1.EnvVar) bool {
	if by == "" {
		return true
	}
	if name, want, ok := strings.Cut(by, "="); ok {
		return slices.ContainsFunc(env, func(e corev1.EnvVar) bool {
			return e.Name == name && e.ValueFrom == nil && strings.EqualFold(e.Value, want)
		})
	}
	i, value, hasValue := findFlag(line, by)
	return i >= 0 && (!hasValue || value == "true" || value == "1")
}

// flagValue finds --name VALUE, --name=VALUE (or one dash) in a command
// line, before any "--". A flag with no value ("--health-check" followed by
// another flag, or last) gives "".
func flagValue(line []string, name string) (string, bool) {
	if name == "" {
		return "", false
	}
	i, value, hasValue := findFlag(line, name)
	switch {
	case i < 0:
		return "", false
	case hasValue:
		return value, true
	case i+1 < len(line) && !strings.HasPrefix(line[i+1], "-"):
		return line[i+1], true
	}
	return "", true
}

// findFlag finds the first --name or --name=VALUE (or one dash) in a
// command line, before any "--": its index (-1 for none) and its value
// after "=".
func findFlag(line []string, name string) (i int, value string, hasValue bool) {
	bare := strings.TrimLeft(name, "-")
	for i, w := range line {
		if w == "--" {
			break
		}
		flag, value, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
		if strings.HasPrefix(w, "-") && flag == bare {
			return i, value, hasValue
		}
	}
	return -1, "", false
}

// stopSignalOf is the graceful stop signal of a sidecar: its image's
// STOPSIGNAL (what the kubelet itself would send), else the known
// sidecar's; "" for TERM. An image's signal sidecar-watch cannot send
// gives a warning and the table's or TERM.
func stopSignalOf(c string, image string, k *KnownSidecar) (value, warning string) {
	if image != "" {
		name := signalName(image)
		if _, err := sidecarspec.StopSignal(name); err == nil {
			if name == "TERM" {
				return "", ""
			}
			return name, ""
		}
		warning = fmt.Sprintf("container %q: its image's STOPSIGNAL %s is not a signal sidecar-watch sends (%s); set %sstop-signal.%s",
			c, image, strings.Join(sidecarspec.StopSignalNames(), ", "), Prefix, c)
	}
	if k != nil && k.StopSignal != "" {
		return k.StopSignal, warning
	}
	return "", warning
}

// signalName normalises an image's STOPSIGNAL ("SIGQUIT", "3", "quit") to
// the name --stop-signal takes.
var signalNumbers = map[string]string{"1": "HUP", "2": "INT", "3": "QUIT", "9": "KILL", "10": "USR1", "12": "USR2", "15": "TERM"}

func signalName(s string) string {
	s = strings.ToUpper(strings.TrimSpace(s))
	if name, ok := signalNumbers[s]; ok {
		return name
	}
	return strings.TrimPrefix(s, "SIG")
}

// wrappedBy names a tool that already does what job-signal does, when
// the command line runs under one: kubexit, linkerd-await or scuttle.
func wrappedBy(line []string, env []corev1.EnvVar) string {
	if len(line) > 0 {
		switch base := path.Base(line[0]); base {
		case "kubexit", "linkerd-await", "scuttle":
			return base
		}
	}
	if slices.ContainsFunc(env, func(e corev1.EnvVar) bool { return e.Name == "KUBEXIT_NAME" }) {
		return "kubexit"
	}
	return ""
}

// migrationHint says how to replace a wrapper by job-signal.
func migrationHint(tool, container string) string {
	switch tool {
	case "kubexit":
		return fmt.Sprintf("remove kubexit from container %q (its command prefix, the KUBEXIT_* variables, the graveyard volume and the init container that copies kubexit), then inject: KUBEXIT_BIRTH_DEPS become %swait-for or %safter.NAME, KUBEXIT_DEATH_DEPS on the job are what job-signal does for every sidecar (see README, \"Leaving kubexit\")",
			container, Prefix, Prefix)
	case "linkerd-await":
		return fmt.Sprintf("remove linkerd-await and its flags up to \"--\" from container %q, then inject: job-signal waits for the linkerd-proxy container's /ready and stops it when the job ends", container)
	}
	return fmt.Sprintf("remove scuttle from container %q's command (and its ENVOY_ADMIN_API, ISTIO_QUIT_API variables), then inject: job-signal waits for the proxy's readiness and calls its quit URL when the job ends", container)
}
