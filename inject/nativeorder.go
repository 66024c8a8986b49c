package inject

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/job-signal/job-signal/signalfs/sidecarname"
)

// The native start order: each init container starts once the one before
// it has started (its startupProbe passed), the regular containers after
// all of them. Three kinds of constraint put a sidecar after another:
// the Pod's after and stop-after annotations (native sidecars stop in
// reverse start order), a startupProbe on a port another container serves
// (it cannot pass before that one runs), and a network proxy, which starts
// before every other sidecar (the kubelet's probes pass through it).

// edgeKind is why one sidecar must start after another.
type edgeKind int

const (
	byAnnotation edgeKind = iota
	byProbe
	byProxy
)

// orderEdge is "from starts after to", and why.
type orderEdge struct {
	from, to string
	kind     edgeKind
	port     int32 // byProbe: the probe's port
}

// startOrder is the sidecars' order as init containers, ties in container
// order; or the obstacle when no order meets the constraints, or a
// startupProbe could never pass.
func startOrder(pod podNeeds, adds map[string]nativeSidecar) ([]string, obstacle) {
	names := make([]string, len(pod.sidecars))
	var edges []orderEdge
	for i, s := range pod.sidecars {
		names[i] = s.name
		for _, b := range pod.after[s.name] {
			edges = append(edges, orderEdge{s.name, b, byAnnotation, 0})
		}
		for _, later := range s.stopAfter {
			edges = append(edges, orderEdge{later, s.name, byAnnotation, 0})
		}
	}
	probeEdges, o := probeOrder(pod, adds)
	if !o.none() {
		return nil, o
	}
	edges = append(edges, probeEdges...)
	for _, p := range pod.sidecars {
		for _, s := range pod.sidecars {
			if p.proxy && !s.proxy {
				edges = append(edges, orderEdge{s.name, p.name, byProxy, 0})
			}
		}
	}
	var before map[string][]string // at the end, every kind's edges
	for _, kind := range []edgeKind{byAnnotation, byProbe, byProxy} {
		before = beforeMap(edges, kind)
		if cycle := sidecarname.FindCycle(names, lookup(before)); cycle != nil {
			return nil, cycleObstacle(cycle, edges, kind)
		}
	}
	var order []string
	placed := map[string]bool{}
	for len(order) < len(names) {
		for _, n := range names {
			if !placed[n] && !slices.ContainsFunc(before[n], func(b string) bool { return !placed[b] }) {
				order, placed[n] = append(order, n), true
				break
			}
		}
	}
	return order, obstacle{}
}

// beforeMap is the edges up to kind: name → the sidecars it starts after.
func beforeMap(edges []orderEdge, upTo edgeKind) map[string][]string {
	before := map[string][]string{}
	for _, e := range edges {
		if e.kind <= upTo && !slices.Contains(before[e.from], e.to) {
			before[e.from] = append(before[e.from], e.to)
		}
	}
	return before
}

// cycleObstacle says why no order exists, naming an edge of kind in the
// cycle (a, b, ..., a: a starts after b, ...).
func cycleObstacle(cycle []string, edges []orderEdge, kind edgeKind) obstacle {
	if kind == byAnnotation {
		return obstacle{ClassOrder,
			fmt.Sprintf("no start order has each sidecar after its after and before its stop-after sidecars (%s), and native sidecars stop in reverse start order", strings.Join(cycle, ", ")),
			"drop one after or stop-after annotation of that cycle"}
	}
	var e orderEdge
	for i := range len(cycle) - 1 {
		if j := slices.IndexFunc(edges, func(e orderEdge) bool { return e.from == cycle[i] && e.to == cycle[i+1] && e.kind == kind }); j >= 0 {
			e = edges[j]
			break
		}
	}
	from, to := strconv.Quote(e.from), strconv.Quote(e.to)
	if kind == byProbe {
		return obstacle{ClassProbeOrder,
			fmt.Sprintf("sidecar %s's startupProbe is on port %d, which %s serves, and the after and stop-after annotations start %s after it", from, e.port, to, to),
			fmt.Sprintf("probe sidecar %s on a port it serves itself, or drop the annotation that starts %s after it", from, to)}
	}
	return obstacle{ClassMeshOrder,
		fmt.Sprintf("network proxy %s must start before sidecar %s (the kubelet's probes pass through it), and the after and stop-after annotations start it after %s", to, from, from),
		fmt.Sprintf("drop the after or stop-after annotation that starts %s after %s", to, from)}
}

// probeOrder is the edges the sidecars' startupProbes ask for: each after
// the sidecar that serves its probe's port. The obstacle when a regular
// container (main, an ignored one) would have to serve it, or is a
// network proxy every probe passes through: it starts after every native
// sidecar.
func probeOrder(pod podNeeds, adds map[string]nativeSidecar) ([]orderEdge, obstacle) {
	var edges []orderEdge
	for _, s := range pod.sidecars {
		h := adds[s.name].probe
		if h == nil || h.Exec != nil {
			continue
		}
		host, port := probeTarget(*h, s.ports)
		if host != "" {
			continue // an address of its own: who serves it is not the Pod's to say
		}
		q := strconv.Quote(s.name)
		for _, r := range pod.regulars {
			if r.proxy {
				return nil, obstacle{ClassMeshOrder,
					fmt.Sprintf("network proxy %q stays a regular container, started after every native sidecar, and sidecar %s's startupProbe passes through it", r.name, q),
					fmt.Sprintf("make %q a sidecar (take it out of %s%s), or give sidecar %s an exec probe", r.name, Prefix, keyIgnore, q)}
			}
		}
		if port == 0 || slices.Contains(s.serves, port) {
			continue
		}
		for _, r := range pod.regulars {
			if slices.Contains(r.serves, port) {
				who := fmt.Sprintf("%q, a regular container", r.name)
				if r.main {
					who = fmt.Sprintf("the main container %q", r.name)
				}
				return nil, obstacle{ClassProbeOrder,
					fmt.Sprintf("sidecar %s's startupProbe is on port %d, which %s serves, started after every native sidecar", q, port, who),
					fmt.Sprintf("probe sidecar %s on a port it serves itself", q)}
			}
		}
		for _, t := range pod.sidecars {
			if t.name != s.name && slices.Contains(t.serves, port) {
				edges = append(edges, orderEdge{s.name, t.name, byProbe, port})
			}
		}
	}
	return edges, obstacle{}
}

// probeTarget is the host a probe names ("" for none: the Pod's IP, and
// then the Pod's ports say who serves it) and the port it goes to.
func probeTarget(h corev1.ProbeHandler, ports []corev1.ContainerPort) (string, int32) {
	switch {
	case h.HTTPGet != nil:
		return h.HTTPGet.Host, portNumber(h.HTTPGet.Port.IntVal, h.HTTPGet.Port.StrVal, ports)
	case h.TCPSocket != nil:
		return h.TCPSocket.Host, portNumber(h.TCPSocket.Port.IntVal, h.TCPSocket.Port.StrVal, ports)
	case h.GRPC != nil:
		return "", h.GRPC.Port
	}
	return "", 0
}

// servedPorts are the ports other containers may probe c on: its
// containerPorts and, for a known network proxy, the table's ProbePorts.
func servedPorts(c *corev1.Container, k *KnownSidecar) []int32 {
	var ports []int32
	for _, p := range c.Ports {
		ports = append(ports, p.ContainerPort)
	}
	if k != nil {
		ports = append(ports, k.ProbePorts...)
	}
	return ports
}
