package inject

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/job-signal/job-signal/signalfs/sidecarspec"
)

// mapSidecar maps one sidecar onto a native one: what to add, or the
// obstacle. pending when its image's STOPSIGNAL decides and is not known
// yet.
func mapSidecar(s sidecarNeeds, podGrace time.Duration, looked bool) (add nativeSidecar, pending bool, o obstacle) {
	q := strconv.Quote(s.name)
	switch {
	case s.ownRestart:
		return add, false, obstacle{ClassRestart, fmt.Sprintf("sidecar %s sets its own restartPolicy", q),
			fmt.Sprintf("remove sidecar %s's restartPolicy and restartPolicyRules", q)}
	case s.restart == "Never":
		return add, false, obstacle{ClassRestart, fmt.Sprintf("sidecar %s has restart Never, and a native sidecar is always restarted", q),
			fmt.Sprintf("drop %srestart Never for sidecar %s", Prefix, q)}
	case s.grace > podGrace:
		return add, false, obstacle{ClassGrace, fmt.Sprintf("sidecar %s's grace %s is more than the Pod's terminationGracePeriodSeconds (%s)", q, s.grace, podGrace),
			fmt.Sprintf("set terminationGracePeriodSeconds to at least %s, or a shorter grace", s.grace)}
	}
	if o := mapReadiness(s, &add); !o.none() {
		return add, false, o
	}
	if s.quitURL != "" {
		h, why, _ := kubeletHandler("ready-http", s.quitURL)
		fix := fmt.Sprintf("drop %squit-url.%s (the kubelet stops it with its image's STOPSIGNAL)", Prefix, s.name)
		switch {
		case why != "":
			return add, false, obstacle{ClassQuitURL, fmt.Sprintf("sidecar %s has a quit URL %s", q, why), fix + ", or give one on an address the kubelet reaches"}
		case s.preStop:
			return add, false, obstacle{ClassQuitURL, fmt.Sprintf("sidecar %s has a quit URL and a preStop hook of its own", q), fix + ", or its own preStop hook"}
		case len(s.stopAfter) > 0:
			return add, false, obstacle{ClassQuitURL, fmt.Sprintf("sidecar %s has a quit URL and stop-after, and the kubelet runs preStop hooks at once", q), fix + fmt.Sprintf(", or %sstop-after.%s", Prefix, s.name)}
		}
		add.preStop = &corev1.LifecycleHandler{HTTPGet: h.HTTPGet}
		add.warning = fmt.Sprintf("sidecar %s: its quit URL becomes a preStop hook, which the kubelet sends as a GET (sidecar-watch POSTs) when the Pod starts terminating", q)
	}
	if s.stopSignal != "" {
		switch {
		case s.imageSignal == "" && looked:
			return add, false, obstacle{ClassStopSignal, fmt.Sprintf("sidecar %s stops on %s (%s), and its image's STOPSIGNAL is not known", q, s.stopSignal, s.stopFrom),
				"let inject read its image's STOPSIGNAL (from a registry it reaches)"}
		case s.imageSignal == "":
			return add, true, obstacle{}
		case s.imageSignal != s.stopSignal:
			return add, false, obstacle{ClassStopSignal, fmt.Sprintf("sidecar %s stops on %s (%s), its image on %s, and lifecycle.stopSignal is behind a feature gate", q, s.stopSignal, s.stopFrom, s.imageSignal),
				fmt.Sprintf("use an image whose STOPSIGNAL is %s", s.stopSignal)}
		}
	}
	return add, false, obstacle{}
}

// mapReadiness decides the startupProbe that says when the sidecar is
// ready, into add, or the obstacle: every probe written or copied must be
// one the kubelet can pass.
func mapReadiness(s sidecarNeeds, add *nativeSidecar) obstacle {
	q := strconv.Quote(s.name)
	instead := func() string { // only for an obstacle
		return fmt.Sprintf("give sidecar %s a readinessProbe without host (the kubelet probes the Pod's IP) on a port it listens on beyond loopback, or %sready-exec.%s", q, Prefix, s.name)
	}
	switch {
	case s.readyKey != "" && s.startupProbe != nil:
		return obstacle{ClassReadiness, fmt.Sprintf("sidecar %s has both %s%s and a startupProbe, and the kubelet would go by the probe alone", q, Prefix, s.readyKey),
			fmt.Sprintf("drop %s%s.%s or its startupProbe", Prefix, s.readyKey, s.name)}
	case s.readyKey == "ready-file":
		return obstacle{ClassReadiness, fmt.Sprintf("sidecar %s is ready on a file (ready-file), which no kubelet probe reads", q),
			fmt.Sprintf("give sidecar %s a startupProbe, a readinessProbe or %sready-exec.%s instead of ready-file", q, Prefix, s.name)}
	case s.readyKey == "ready-exec":
		argv, _ := sidecarspec.Exec(s.readyValue) // checked by parseSettings
		h := corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: argv}}
		add.startupProbe, add.probe = startupProbe(h, nil), &h
	case s.readyKey == "ready-http" || s.readyKey == "ready-tcp":
		h, why, class := kubeletHandler(s.readyKey, s.readyValue)
		if why != "" {
			return obstacle{class, fmt.Sprintf("sidecar %s is ready %s", q, why), instead()}
		}
		add.startupProbe, add.probe = startupProbe(h, nil), &h
	case s.startupProbe != nil:
		h := s.startupProbe.ProbeHandler
		add.probe = &h
	case s.readinessProbe != nil:
		r := s.readinessProbe
		if r.SuccessThreshold > 1 {
			return obstacle{ClassReadiness, fmt.Sprintf("sidecar %s's readinessProbe has successThreshold %d, and a startupProbe must have 1", q, r.SuccessThreshold),
				fmt.Sprintf("set successThreshold 1 in sidecar %s's readinessProbe", q)}
		}
		if where, why, class := probeReach(r.ProbeHandler, s.ports); why != "" {
			return obstacle{class, fmt.Sprintf("sidecar %s's readinessProbe is on %s, %s", q, where, why),
				fmt.Sprintf("drop the host of sidecar %s's readinessProbe (the kubelet then probes the Pod's IP) and have it listen there, or give it an exec probe", q)}
		}
		h := r.ProbeHandler
		add.startupProbe, add.probe = startupProbe(h, r), &h
	case s.tableReady != "":
		_, why, class := kubeletHandler("ready-http", s.tableReady)
		return obstacle{class, fmt.Sprintf("sidecar %s (a known sidecar) is ready %s", q, why), instead()}
	}
	return obstacle{}
}

// probeReach says why the kubelet, probing from the node, cannot reach a
// probe's host, and where that is ("" when it can: no host is the Pod's
// IP; an exec probe runs in the container; a gRPC probe has no host).
func probeReach(h corev1.ProbeHandler, ports []corev1.ContainerPort) (where, why string, class ReasonClass) {
	host, port := probeTarget(h, ports)
	if host == "" {
		return "", "", ""
	}
	where = net.JoinHostPort(host, strconv.Itoa(int(port)))
	why, class = hostReach(host)
	return shorten(where), why, class
}

// hostReach says why the kubelet cannot reach host in the Pod: the Pod's
// loopback, or a name resolved on the node; "" when it can (an IP of the
// Pod's network).
func hostReach(host string) (string, ReasonClass) {
	ip, err := netip.ParseAddr(host)
	switch {
	case host == "localhost":
		return "the Pod's loopback, which the kubelet cannot reach", ClassLoopbackProbe
	case err != nil:
		return "a name the kubelet would resolve on the node, not in the Pod", ClassProbeHost
	case ip.IsLoopback() || ip.IsUnspecified():
		return "the Pod's loopback, which the kubelet cannot reach", ClassLoopbackProbe
	}
	return "", ""
}

// portNumber is a probe's port as a number: n, or the containerPort named
// name (0 when none is).
func portNumber(n int32, name string, ports []corev1.ContainerPort) int32 {
	if name == "" {
		return n
	}
	for _, p := range ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	return 0
}

// What the kubelet runs for a native sidecar: its startupProbe and its
// preStop hook, from the values of job-signal's annotations.

// Probe timing of the startupProbe the native form writes: checked every
// second, for as long as job-signal waits by default (--ready-timeout 5m)
// before the kubelet restarts the sidecar.
const (
	startupPeriod  = 1
	startupFailure = 300
)

// kubeletHandler is the probe handler the kubelet runs for a ready-http
// or ready-tcp value, or why it cannot (with its class): the kubelet
// probes from the node, so the Pod's loopback and names resolved in the
// Pod are out of reach.
func kubeletHandler(key, value string) (corev1.ProbeHandler, string, ReasonClass) {
	hostport, path, where := value, "", shorten(value)
	if key == "ready-http" {
		u, err := sidecarspec.HTTPURL(value)
		if err != nil {
			return corev1.ProbeHandler{}, "on " + where + ", not an http URL", ClassReadiness
		}
		hostport, path = u.Host, u.EscapedPath()
		if u.Port() == "" {
			hostport = net.JoinHostPort(u.Hostname(), "80")
		}
		if u.RawQuery != "" {
			path += "?" + u.RawQuery
		}
		if path == "" {
			path = "/"
		}
	}
	host, port, err := net.SplitHostPort(hostport)
	n, perr := strconv.Atoi(port)
	if err != nil || perr != nil {
		return corev1.ProbeHandler{}, "on " + where + ", which has no port", ClassReadiness
	}
	if why, class := hostReach(host); why != "" {
		return corev1.ProbeHandler{}, fmt.Sprintf("on %s, %s", where, why), class
	}
	if key == "ready-tcp" {
		return corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(int32(n)), Host: host}}, "", ""
	}
	return corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(int32(n)), Host: host}}, "", ""
}

// startupProbe is the startupProbe the native form writes: h, the delay
// and timeout of from (a readinessProbe copied), checked every second.
func startupProbe(h corev1.ProbeHandler, from *corev1.Probe) *corev1.Probe {
	p := corev1.Probe{ProbeHandler: h, PeriodSeconds: startupPeriod, FailureThreshold: startupFailure}
	if from != nil {
		p.InitialDelaySeconds, p.TimeoutSeconds = from.InitialDelaySeconds, from.TimeoutSeconds
	}
	return &p
}

// shorten keeps a value quoted in a reason short: reasons go into the
// Pod's annotations and logs.
func shorten(s string) string {
	const most = 80
	if len(s) <= most {
		return s
	}
	return strings.ToValidUTF8(s[:most-3], "") + "..."
}
