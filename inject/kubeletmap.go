package inject

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/job-signal/job-signal/signalfs/sidecarspec"
)

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
