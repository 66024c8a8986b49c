package inject

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// The choice between job-signal's pair and Kubernetes' native sidecars
// (init containers with restartPolicy Always) rests on what the kubelet,
// the runtime and the Job controller do with them: docs/native.md states
// each fact with the place in Kubernetes' source it was read in.

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
	// ports are its containerPorts (a probe's named port is one of them);
	// serves the ports other containers may probe it on: those and, for
	// a known network proxy, the table's ProbePorts.
	ports  []corev1.ContainerPort
	serves []int32
	proxy  bool // a known network proxy (KnownSidecar.NetworkProxy)
	prompt bool // known to stop promptly on its stop signal (KnownSidecar.StopsPromptly)
}

// regular is a container that stays a regular container (the main one,
// an ignored one): it starts after every native sidecar.
type regular struct {
	name   string
	main   bool
	proxy  bool
	serves []int32
}

// podNeeds is what the whole Pod needs: its sidecars in container order.
type podNeeds struct {
	sidecars     []sidecarNeeds
	regulars     []regular
	after        map[string][]string
	readyTimeout bool // main's ready-timeout annotation, other than 0 (for ever)
	// looked: the images have been looked up; an image's STOPSIGNAL not
	// known then will not be.
	looked      bool
	someWaitFor bool          // main's wait-for names some sidecars only
	grace       time.Duration // terminationGracePeriodSeconds
	// exitCodes: the containers the Job's podFailurePolicy judges by exit
	// code (exitCodeRules: "*" for every one).
	exitCodes judged
}

// nativeSidecar is what the native form adds to one moved container.
type nativeSidecar struct {
	// The startupProbe and preStop hook to add, nil for none: written
	// out (fieldsOf) only when the native form's changes are, so that a
	// Pod that keeps the pair pays nothing for them.
	startupProbe *corev1.Probe
	preStop      *corev1.LifecycleHandler
	warning      string
	// probe is the startupProbe the kubelet will run (its own or the one
	// added), nil for none.
	probe *corev1.ProbeHandler
}

// choice is the form chosen for a Pod, and why.
type choice struct {
	form   Form
	class  ReasonClass
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
// signal: the mode and the cluster first, then the Job's podFailurePolicy,
// each sidecar, the main container, the Pod's start order, and last how
// promptly its sidecars stop.
func decideForm(target Target, pod podNeeds) choice {
	switch {
	case target.Mode == ModePair:
		return choice{form: FormPair, class: ClassMode, reason: "pair: mode pair"}
	case target.Mode == ModeAuto && !target.Cluster.Known:
		return choice{form: FormPair, class: ClassClusterUnknown, reason: "pair: the cluster is not known, and the pair works on every cluster"}
	case target.Cluster.Known && !target.Cluster.NativeSidecars:
		return notNative(target, clusterObstacle(target.Cluster))
	}
	if o := exitCodesJudged(pod); !o.none() {
		return notNative(target, o)
	}
	ch := choice{form: FormNative, class: ClassNative, reason: reasonNative, adds: map[string]nativeSidecar{}}
	for _, s := range pod.sidecars {
		add, pending, o := mapSidecar(s, pod.grace, pod.looked)
		if !o.none() {
			return notNative(target, o)
		}
		if pending {
			ch.pending = append(ch.pending, s.name)
		}
		ch.adds[s.name] = add
		if add.warning != "" {
			ch.warnings = append(ch.warnings, add.warning)
		}
	}
	if pod.someWaitFor {
		ch.warnings = append(ch.warnings, Prefix+"wait-for names some sidecars only: as native sidecars, all of them start before the main container")
	}
	if pod.readyTimeout {
		return notNative(target, obstacle{ClassReadyTimeout,
			"the main container's ready-timeout: a native sidecar that is never ready is restarted, it cannot fail the Pod",
			"set " + Prefix + "ready-timeout to 0 (wait for ever) or drop it"})
	}
	order, o := startOrder(pod, ch.adds)
	if !o.none() {
		return notNative(target, o)
	}
	ch.order = order
	if o, warning := slowStop(pod); !o.none() {
		if target.Mode == ModeAuto {
			return notNative(target, o)
		}
		ch.warnings = append(ch.warnings, warning)
	}
	if len(ch.pending) > 0 {
		ch.form, ch.class, ch.reason = "", "", ""
	}
	return ch
}

// clusterObstacle is why a known cluster has no native sidecars.
func clusterObstacle(c Cluster) obstacle {
	why := c.Reason
	switch {
	case why == "" && c.Version == "":
		why = "the cluster has no native sidecars"
	case why == "":
		why = fmt.Sprintf("the cluster (%s) has no native sidecars", c.Version)
	}
	return obstacle{ClassCluster, why, fmt.Sprintf("run the API server and every kubelet at 1.%d or later", NativeMinor)}
}

// exitCodesJudged: the Job's podFailurePolicy reads a sidecar's exit code,
// which the native form changes (the program's own, 143 after TERM, where
// sidecar-watch exits 0), and so could change the Job's verdict.
func exitCodesJudged(pod podNeeds) obstacle {
	for _, s := range pod.sidecars {
		if !pod.exitCodes.judges(s.name) {
			continue
		}
		q := strconv.Quote(s.name)
		rule, fix := "", fmt.Sprintf("take sidecar %s out of the onExitCodes rules of the Job's podFailurePolicy", q)
		if pod.exitCodes.all {
			rule, fix = " (a rule without containerName)", "give every onExitCodes rule of the Job's podFailurePolicy the main container's containerName"
		}
		return obstacle{ClassPodFailurePolicy,
			fmt.Sprintf("the Job's podFailurePolicy judges sidecar %s's exit code%s, which native sidecars change: 143 or 137 when stopped, 0 in the pair", q, rule), fix}
	}
	return obstacle{}
}

// slowStop: a sidecar not known to stop promptly on its stop signal, in a
// Pod whose terminationGracePeriodSeconds is longer than the pair's grace
// for it, could hold a native Pod up to that grace period where the pair
// kills it after its own: the obstacle for auto, the warning for mode
// native (the user's choice).
func slowStop(pod podNeeds) (obstacle, string) {
	for _, s := range pod.sidecars {
		budget := s.grace
		if budget == 0 {
			budget = DefaultGrace
		}
		if s.prompt || pod.grace <= budget {
			continue
		}
		q := strconv.Quote(s.name)
		return obstacle{ClassSlowStop,
				fmt.Sprintf("sidecar %s is not known to stop on its stop signal: native, it could hold the Pod for terminationGracePeriodSeconds (%s), the pair for its grace (%s)", q, pod.grace, budget),
				fmt.Sprintf("set terminationGracePeriodSeconds to at most %s, or %sgrace.%s to as long as it may take to stop", budget, Prefix, s.name)},
			fmt.Sprintf("sidecar %s is not known to stop on its stop signal: as a native sidecar it could hold the Pod for terminationGracePeriodSeconds (%s), where the pair stops it within its grace (%s)", q, pod.grace, budget)
	}
	return obstacle{}, ""
}

// notNative is the choice when native sidecars cannot serve the Pod, or
// would serve it worse: the pair in auto, a refusal in mode native.
func notNative(target Target, o obstacle) choice {
	if target.Mode == ModeNative {
		return choice{class: o.class, reason: "native: " + o.why, err: &NotNativeError{Class: o.class, Why: o.why, Fix: o.fix}}
	}
	return choice{form: FormPair, class: o.class, reason: "pair: " + o.why}
}

// ReasonClass names, in a word or two, why a form was chosen or refused:
// a bounded set, fit for a metric label, beside the reason itself (one
// line, for logs and the record). ReasonClasses lists every one.
type ReasonClass string

const (
	ClassMode             ReasonClass = "mode"               // mode pair asked for
	ClassClusterUnknown   ReasonClass = "cluster-unknown"    // auto, the cluster not known
	ClassCluster          ReasonClass = "cluster"            // the API server or a kubelet without native sidecars
	ClassNative           ReasonClass = "native"             // every sidecar maps
	ClassRestart          ReasonClass = "restart"            // restart Never, a restartPolicy of its own
	ClassGrace            ReasonClass = "grace"              // a sidecar's grace above the Pod's
	ClassReadiness        ReasonClass = "readiness"          // a readiness no startupProbe can say
	ClassLoopbackProbe    ReasonClass = "loopback-probe"     // readiness on the Pod's loopback
	ClassProbeHost        ReasonClass = "probe-host"         // readiness on a name the node resolves
	ClassQuitURL          ReasonClass = "quit-url"           // a quit URL no preStop hook can send
	ClassStopSignal       ReasonClass = "stop-signal"        // a stop signal other than the image's
	ClassReadyTimeout     ReasonClass = "ready-timeout"      // main's ready-timeout
	ClassOrder            ReasonClass = "order"              // after and stop-after at odds
	ClassProbeOrder       ReasonClass = "probe-order"        // a startupProbe served by a container that starts later
	ClassMeshOrder        ReasonClass = "mesh-order"         // a network proxy that cannot start first
	ClassPodFailurePolicy ReasonClass = "pod-failure-policy" // the Job judges a sidecar's exit code
	ClassSlowStop         ReasonClass = "slow-stop"          // a sidecar not known to stop on its signal
)

// ReasonClasses is every ReasonClass, for a front end that declares its
// metric's labels up front.
var ReasonClasses = []ReasonClass{ClassMode, ClassClusterUnknown, ClassCluster, ClassNative, ClassRestart,
	ClassGrace, ClassReadiness, ClassLoopbackProbe, ClassProbeHost, ClassQuitURL, ClassStopSignal, ClassReadyTimeout,
	ClassOrder, ClassProbeOrder, ClassMeshOrder, ClassPodFailurePolicy, ClassSlowStop}

// obstacle is what keeps native sidecars from serving a Pod: its class,
// why (one line, for the pair's reason), and the change to the Pod that
// would let them serve it (for mode native's refusal).
type obstacle struct {
	class ReasonClass
	why   string
	fix   string
}

func (o obstacle) none() bool { return o.why == "" }

// NotNativeError is mode native's refusal of a Pod that native sidecars
// cannot serve: why, and the change to the Pod that would let them. It
// wraps ErrNotNative.
type NotNativeError struct {
	Class ReasonClass
	// Why is one line; Fix says what to change in the Pod.
	Why, Fix string
}

func (e *NotNativeError) Error() string {
	return fmt.Sprintf("%v: %s; for native sidecars, %s; or inject it in mode auto or pair", ErrNotNative, e.Why, e.Fix)
}

func (e *NotNativeError) Unwrap() error { return ErrNotNative }

// ErrNotNative is wrapped by the error of mode native for a Pod that native
// sidecars cannot serve.
var ErrNotNative = errors.New("native sidecars cannot serve this Pod")
