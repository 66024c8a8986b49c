package inject

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
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
	return target.prepare(readTemplate(data))
}

// PrepareParsedFor is PrepareFor of data that Parse decoded into p
// already (p.Object is the template's from then on).
func PrepareParsedFor(data []byte, p Parsed, target Target) (*Plan, error) {
	return target.prepare(parsedTemplate(data, p))
}

// PrepareDecodedFor is PrepareDecoded with the form chosen for target.
func PrepareDecodedFor(raw map[string]any, target Target) (*Plan, error) {
	return target.prepare(readDecoded(raw))
}

// NativeMinor is the first minor version of Kubernetes 1 whose native
// sidecars (the SidecarContainers feature, KEP-753) are stable with their
// feature gate locked on, in the API server and the kubelet alike. Before
// it the gate can be off in any kubelet, which the API server cannot see:
// such a kubelet runs a native sidecar as an ordinary init container that
// never ends, and the Pod never starts. Native sidecars are chosen only
// where the API server and every Node's kubelet are at least 1.33
// (Istio's rule for its own native sidecars, for the same reason).
const NativeMinor = 33

var kubeVersionRE = regexp.MustCompile(`^v?(\d+)\.(\d+)(\.\d+)?([-+][0-9A-Za-z.+-]*)?$`)

// ParseKubeVersion reads a Kubernetes version as the API server, a
// kubelet or a user writes it (v1.29, 1.30.2, v1.31.0-gke.1): its minor
// version within 1.x.
func ParseKubeVersion(s string) (minor int, err error) {
	m := kubeVersionRE.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("%q is not a Kubernetes version (vMAJOR.MINOR[.PATCH], e.g. v1.33)", OneLine(s, 80))
	}
	if m[1] != "1" {
		return 0, fmt.Errorf("%q: only Kubernetes 1.x is known", s)
	}
	minor, err = strconv.Atoi(m[2])
	if err != nil {
		return 0, fmt.Errorf("%q: minor version out of range", s)
	}
	return minor, nil
}

// Node is what the choice of form reads of one Node: its name and the
// version its kubelet reports (status.nodeInfo.kubeletVersion).
type Node struct {
	Name           string
	KubeletVersion string
}

// ClusterFrom is what a cluster whose API server reports version server
// and whose Nodes are nodes offers: native sidecars only when the API
// server and every kubelet are at least 1.NativeMinor. Reason says which
// holds them back (the first by name, and how many more). A kubelet
// version that cannot be read holds them back too. Pure: the webhook's
// loop and the plugin read the versions, this decides.
func ClusterFrom(server string, nodes []Node) Cluster {
	c := Cluster{Known: true, Version: server}
	minor, err := ParseKubeVersion(server)
	switch {
	case err != nil:
		c.Reason = fmt.Sprintf("the API server's version %s cannot be read", OneLine(server, 80))
		return c
	case minor < NativeMinor:
		c.Reason = fmt.Sprintf("the API server is %s, before 1.%d", server, NativeMinor)
		return c
	}
	var old []Node
	for _, n := range nodes {
		if m, err := ParseKubeVersion(n.KubeletVersion); err != nil || m < NativeMinor {
			old = append(old, n)
		}
	}
	if len(old) == 0 {
		c.NativeSidecars = true
		return c
	}
	slices.SortFunc(old, func(a, b Node) int { return cmp.Compare(a.Name, b.Name) })
	c.Reason = fmt.Sprintf("node %s's kubelet is %s, before 1.%d", OneLine(old[0].Name, 80), OneLine(old[0].KubeletVersion, 40), NativeMinor)
	if len(old) > 1 {
		c.Reason += fmt.Sprintf(" (and %d more nodes)", len(old)-1)
	}
	c.HeldBack = len(old)
	return c
}
