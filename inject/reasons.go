package inject

import (
	"errors"
	"fmt"
)

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
