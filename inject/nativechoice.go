package inject

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/job-signal/job-signal/internal/sidecarspec"
	"github.com/job-signal/job-signal/signalfs/sidecarname"
)

// The choice between job-signal's pair and Kubernetes' native sidecars
// (init containers with restartPolicy Always) rests on what the kubelet
// does with them (read in Kubernetes' source, pkg/kubelet):
//
//   - a native sidecar's exit code does not count for the Pod's phase
//     (getPhase skips terminated restartable init containers), and the
//     kubelet ends the Pod once the regular containers have ended, stopping
//     the sidecars after them, the last started first;
//   - each init container starts after the one before it has started (its
//     startupProbe passed): the start order is the list's order;
//   - an HTTP or TCP probe or preStop hook without a host goes to the Pod's
//     IP, from the node: the Pod's loopback is out of its reach;
//   - a native sidecar is always restarted when it exits, and one whose
//     startupProbe never passes is restarted, never failing the Pod;
//   - the runtime stops it with its image's STOPSIGNAL (lifecycle.stopSignal
//     is behind a feature gate that is off by default: not used);
//   - preStop hooks run when the Pod starts terminating (for a sidecar, not
//     after the regular containers), as an HTTP GET.

// ErrNotNative is wrapped by the error of mode native for a Pod that native
// sidecars cannot serve.
var ErrNotNative = errors.New("native sidecars cannot serve this Pod")

// sidecarNeeds is what one sidecar needs, as the choice of form reads it:
// plain data, gathered from the Pod, its annotations, the known-sidecar
// table and (for the stop signal) its image.
type sidecarNeeds struct {
	name string
	// readyKey and readyValue are a ready-* annotation ("" when none);
	// tableReady the known sidecar's readiness URL when no annotation or
	// probe says more.
	readyKey, readyValue, tableReady string
	// startupProbe, readinessProbe: the container's own probes.
	startupProbe, readinessProbe *corev1.Probe
	quitURL                      string // annotation quit-url
	// stopSignal is the signal asked for by annotation or the known
	// sidecar's row, "" for none; imageSignal the image's STOPSIGNAL
	// ("TERM" when it has none), "" when not known.
	stopSignal, stopFrom, imageSignal string
	grace                             time.Duration // annotation grace, 0 for none
	restart                           string        // annotation restart
	stopAfter                         []string
	preStop                           bool // it has a preStop hook already
	ownRestart                        bool // it sets restartPolicy or restartPolicyRules itself
}

// podNeeds is what the whole Pod needs: its sidecars in container order.
type podNeeds struct {
	sidecars     []sidecarNeeds
	after        map[string][]string
	readyTimeout bool // main's ready-timeout annotation, other than 0 (for ever)
	// looked: the images have been looked up; an image's STOPSIGNAL not
	// known then will not be.
	looked      bool
	someWaitFor bool          // main's wait-for names some sidecars only
	grace       time.Duration // terminationGracePeriodSeconds
}

// nativeSidecar is what the native form adds to one moved container.
type nativeSidecar struct {
	startupProbe Fields // nil: none added
	preStop      Fields // nil: none added
	warning      string
}

// choice is the form chosen for a Pod, and why.
type choice struct {
	form   Form
	reason string
	err    error // mode native for a Pod native sidecars cannot serve
	// pending lists the sidecars whose image's STOPSIGNAL decides and is
	// not known yet; signalled those that ask for a stop signal.
	pending   []string
	signalled []string
	order     []string // native: the sidecars in start order
	adds      map[string]nativeSidecar
	signals   map[string]string // the STOPSIGNALs read, for the record
	warnings  []string
}

const reasonNative = "native: every sidecar maps onto an init container with restartPolicy Always"

// chooseForm decides the form for target: the one decision, pure.
func chooseForm(target Target, pod podNeeds) choice {
	ch := decideForm(target, pod)
	for _, s := range pod.sidecars {
		if s.stopSignal != "" && ch.err == nil {
			ch.signalled = append(ch.signalled, s.name)
		}
	}
	return ch
}

// decideForm is chooseForm but for the sidecars that ask for a stop
// signal: the mode and the cluster first, then each sidecar, then the
// Pod's order.
func decideForm(target Target, pod podNeeds) choice {
	switch {
	case target.Mode == ModePair:
		return choice{form: FormPair, reason: "pair: mode pair"}
	case target.Mode == ModeAuto && !target.Cluster.Known:
		return choice{form: FormPair, reason: "pair: the cluster is not known, and the pair works on every cluster"}
	case target.Cluster.Known && !target.Cluster.NativeSidecars:
		why := fmt.Sprintf("the cluster%s has no native sidecars", inVersion(target.Cluster.Version))
		if target.Mode == ModeNative {
			return refuse(why)
		}
		return choice{form: FormPair, reason: "pair: " + why}
	}
	ch := choice{form: FormNative, reason: reasonNative, adds: map[string]nativeSidecar{}}
	for _, s := range pod.sidecars {
		add, why := mapSidecar(s, pod.grace, pod.looked)
		switch {
		case why != "":
			return notNative(target, why)
		case add == nil:
			ch.pending = append(ch.pending, s.name)
		default:
			ch.adds[s.name] = *add
			if add.warning != "" {
				ch.warnings = append(ch.warnings, add.warning)
			}
		}
	}
	if pod.someWaitFor {
		ch.warnings = append(ch.warnings, Prefix+"wait-for names some sidecars only: as native sidecars, all of them start before the main container")
	}
	if pod.readyTimeout {
		return notNative(target, "the main container's ready-timeout: a native sidecar that is never ready is restarted, it cannot fail the Pod")
	}
	order, why := startOrder(pod)
	if why != "" {
		return notNative(target, why)
	}
	ch.order = order
	if len(ch.pending) > 0 {
		ch.form, ch.reason = "", ""
	}
	return ch
}

func inVersion(v string) string {
	if v == "" {
		return ""
	}
	return " (" + v + ")"
}

// notNative is the choice when a sidecar does not map: the pair in auto,
// a refusal in mode native.
func notNative(target Target, why string) choice {
	if target.Mode == ModeNative {
		return refuse(why)
	}
	return choice{form: FormPair, reason: "pair: " + why}
}

func refuse(why string) choice {
	return choice{reason: "native: " + why, err: fmt.Errorf("%w: %s; inject it in mode auto or pair", ErrNotNative, why)}
}

// mapSidecar maps one sidecar onto a native one: what to add, or why it
// does not map. Neither (nil, "") when its image's STOPSIGNAL decides and
// is not known yet.
func mapSidecar(s sidecarNeeds, podGrace time.Duration, looked bool) (*nativeSidecar, string) {
	q := strconv.Quote(s.name)
	var add nativeSidecar
	switch {
	case s.ownRestart:
		return nil, fmt.Sprintf("sidecar %s sets its own restartPolicy", q)
	case s.restart == "Never":
		return nil, fmt.Sprintf("sidecar %s has restart Never, and a native sidecar is always restarted", q)
	case s.grace > podGrace:
		return nil, fmt.Sprintf("sidecar %s's grace %s is more than the Pod's terminationGracePeriodSeconds (%s)", q, s.grace, podGrace)
	}
	switch {
	case s.readyKey != "" && s.startupProbe != nil:
		return nil, fmt.Sprintf("sidecar %s has both %s%s and a startupProbe, and the kubelet would go by the probe alone", q, Prefix, s.readyKey)
	case s.readyKey == "ready-file":
		return nil, fmt.Sprintf("sidecar %s is ready on a file (ready-file), which no kubelet probe reads", q)
	case s.readyKey == "ready-exec":
		argv, _ := sidecarspec.Exec(s.readyValue) // checked by parseSettings
		add.startupProbe = probeFields(corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: argv}}, nil)
	case s.readyKey == "ready-http" || s.readyKey == "ready-tcp":
		h, why := kubeletHandler(s.readyKey, s.readyValue)
		if why != "" {
			return nil, fmt.Sprintf("sidecar %s is ready %s", q, why)
		}
		add.startupProbe = probeFields(h, nil)
	case s.startupProbe != nil:
	case s.readinessProbe != nil:
		if s.readinessProbe.SuccessThreshold > 1 {
			return nil, fmt.Sprintf("sidecar %s's readinessProbe has successThreshold %d, and a startupProbe must have 1", q, s.readinessProbe.SuccessThreshold)
		}
		add.startupProbe = probeFields(s.readinessProbe.ProbeHandler, s.readinessProbe)
	case s.tableReady != "":
		_, why := kubeletHandler("ready-http", s.tableReady)
		return nil, fmt.Sprintf("sidecar %s (a known sidecar) is ready %s", q, why)
	}
	if s.quitURL != "" {
		h, why := kubeletHandler("ready-http", s.quitURL)
		switch {
		case why != "":
			return nil, fmt.Sprintf("sidecar %s has a quit URL %s", q, why)
		case s.preStop:
			return nil, fmt.Sprintf("sidecar %s has a quit URL and a preStop hook of its own", q)
		case len(s.stopAfter) > 0:
			return nil, fmt.Sprintf("sidecar %s has a quit URL and stop-after, and the kubelet runs preStop hooks at once", q)
		}
		add.preStop = fieldsOf(corev1.LifecycleHandler{HTTPGet: h.HTTPGet})
		add.warning = fmt.Sprintf("sidecar %s: its quit URL becomes a preStop hook, which the kubelet sends as a GET (sidecar-watch POSTs) when the Pod starts terminating", q)
	}
	if s.stopSignal != "" {
		switch {
		case s.imageSignal == "" && looked:
			return nil, fmt.Sprintf("sidecar %s stops on %s (%s), and its image's STOPSIGNAL is not known", q, s.stopSignal, s.stopFrom)
		case s.imageSignal == "":
			return nil, ""
		case s.imageSignal != s.stopSignal:
			return nil, fmt.Sprintf("sidecar %s stops on %s (%s), its image on %s, and lifecycle.stopSignal is behind a feature gate", q, s.stopSignal, s.stopFrom, s.imageSignal)
		}
	}
	return &add, ""
}

// startOrder is the sidecars' order as init containers: each after the
// sidecars its after names, and before those its stop-after names (native
// sidecars stop in reverse start order); ties in container order. Why not,
// when no order does both.
func startOrder(pod podNeeds) ([]string, string) {
	names := make([]string, len(pod.sidecars))
	before := map[string][]string{} // name: the sidecars that must start before it
	for i, s := range pod.sidecars {
		names[i] = s.name
		before[s.name] = append(before[s.name], pod.after[s.name]...)
		for _, later := range s.stopAfter {
			before[later] = append(before[later], s.name)
		}
	}
	if cycle := sidecarname.FindCycle(names, lookup(before)); cycle != nil {
		return nil, fmt.Sprintf("no start order has each sidecar after its after and before its stop-after sidecars (%s), and native sidecars stop in reverse start order", strings.Join(cycle, ", "))
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
	return order, ""
}
