package inject

import (
	"fmt"
	"strings"
)

// Mode is the form a user asks inject for: job-signal's pair (job-signal
// and sidecar-watch), Kubernetes' native sidecars, or, with auto, native
// sidecars where the target cluster has them and they serve the Pod, the
// pair otherwise.
type Mode string

const (
	ModePair   Mode = "pair"
	ModeNative Mode = "native"
	ModeAuto   Mode = "auto"
)

// ParseMode reads a mode as a flag or a value gives it.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case ModePair, ModeNative, ModeAuto:
		return m, nil
	}
	return "", fmt.Errorf("mode %q: give pair, native or auto", s)
}

// Cluster is what is known of the cluster a Pod will run on.
type Cluster struct {
	// Known is false when nothing is known (the plugin offline without
	// --kube-version, the webhook before its first check): auto then
	// gives the pair, which works on every cluster.
	Known bool
	// NativeSidecars: the cluster keeps an init container's
	// restartPolicy Always and runs it as a sidecar.
	NativeSidecars bool
	// Version is the cluster's version as it reports it ("v1.37.2"),
	// for messages; empty when not known.
	Version string
	// Reason says why a known cluster has no native sidecars (the API
	// server's or a kubelet's version): ClusterFrom writes it.
	Reason string
	// HeldBack is how many Nodes' kubelets hold native sidecars back.
	HeldBack int
}

// Target is how the caller wants a Pod's form chosen. The zero Target
// asks for the pair.
type Target struct {
	Mode    Mode
	Cluster Cluster
	// ExitCodeRules is what the caller read of the Job's
	// podFailurePolicy, as ExitCodeRulesOf gives it ("" when it read none);
	// the template's annotation AnnotationExitCodeRules says the same
	// when the webhook wrote it. Either naming a sidecar keeps the pair.
	ExitCodeRules string
}

// Form is what inject chose for one Pod.
type Form string

const (
	FormPair   Form = "pair"
	FormNative Form = "native"
)

// PrepareFor is Prepare with the form chosen for target: the pair,
// native sidecars, or (auto) whichever serves the Pod on that cluster.
// Prepare is PrepareFor with ModePair.
//
// The choice (chooseForm) is made here when the Pod alone decides it, or
// by Inject when a sidecar's image's STOPSIGNAL does (see Needs). A
// template injected before is decided on as it was before its injection:
// injecting it in another mode takes the old form out and puts the new
// one in.
func PrepareFor(data []byte, target Target) (*Plan, error) {
	t, err := readTemplate(data)
	if err != nil {
		return nil, err
	}
	return prepare(t, target)
}

// PrepareParsedFor is PrepareFor of data that Parse decoded into p
// already (p.Object is the template's from then on).
func PrepareParsedFor(data []byte, p Parsed, target Target) (*Plan, error) {
	t, err := parsedTemplate(data, p)
	if err != nil {
		return nil, err
	}
	return prepare(t, target)
}

// PrepareDecodedFor is PrepareDecoded with the form chosen for target.
func PrepareDecodedFor(raw map[string]any, target Target) (*Plan, error) {
	t, err := readDecoded(raw)
	if err != nil {
		return nil, err
	}
	return prepare(t, target)
}
