package cluster

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Version is one Kubernetes release the suite can run: a module of its own
// below e2e/kubernetes/ (written by pin.sh) pins k8s.io/kubernetes and the
// etcd server that release requires.
type Version struct {
	Kube   string // e.g. v1.37.2
	Etcd   string // e.g. v3.7.0
	Module string // the folder of its go.mod
	minor  int    // 37
	patch  int    // 2
}

func (v Version) String() string { return v.Kube }

// Minor is the release's minor version: 37 for v1.37.2.
func (v Version) Minor() int { return v.minor }

// Features are what the suite's cases depend on that differ between the
// Kubernetes versions it runs. featuresOf decides them; nothing else does.
type Features struct {
	// NativeSidecars: init containers with restartPolicy Always run as
	// sidecars. Where the feature gate can still be turned off (before 1.33,
	// where it is GA and locked), the suite turns it off: that cluster stands
	// for the users who have no native sidecars, and a native-sidecar Pod on
	// it never starts (it stays Pending).
	NativeSidecars bool
	// FeatureGates is the --feature-gates value of the API server, the
	// controller manager, the scheduler and the kubelet ("" for none).
	FeatureGates string
	// FailCgroupV1Field: the kubelet's configuration has failCgroupV1 (1.31+).
	// From 1.35 the kubelet refuses this machine's cgroup v1 hierarchy unless
	// it is false; before 1.31 the kubelet rejects the unknown field.
	FailCgroupV1Field bool
	// JobVerdictFirst: the Job controller records its verdict first
	// (SuccessCriteriaMet or FailureTarget, with the reason the terminal
	// condition will have) and adds Complete or Failed only once every Pod has
	// ended (1.31+). Before, Complete comes at once and has no reason.
	JobVerdictFirst bool
	// Powers are what the harness can do besides the API: all of them on
	// the cluster it builds, none on one it attaches to (Attach).
	Powers
}

// Powers are the harness's reach past the Kubernetes API, which only the
// cluster it builds on this machine gives; a test that needs one skips on
// a cluster it attached to, saying which.
type Powers struct {
	// NodeProcesses: the one node is this machine. PodProcesses,
	// ContainerProcesses and CRIContainers read its cgroups and runtime, a
	// test may signal a container's processes, and a hostPath folder is a
	// folder here.
	NodeProcesses bool
	// Loopback: the API server and the node's runtime share this machine's
	// 127.0.0.1, and trust IssueServingCert's certificates (CAPEM): a
	// webhook, or a registry, a test serves there is reachable.
	Loopback bool
	// LocalImages: images go straight into the node's containerd (LoadImage
	// imports them, TagImage names them again). Without it they reach the
	// nodes through Config.Registry or Config.Load, under the names
	// ImageRef gives.
	LocalImages bool
}

// builtPowers are the cluster Start builds: everything runs on this machine.
var builtPowers = Powers{NodeProcesses: true, Loopback: true, LocalImages: true}

// featuresOf is the one place that knows what each minor version has.
func featuresOf(minor int) Features {
	f := Features{
		NativeSidecars:    minor >= 33,
		FailCgroupV1Field: minor >= 31,
		JobVerdictFirst:   minor >= 31,
	}
	if !f.NativeSidecars {
		f.FeatureGates = "SidecarContainers=false"
	}
	return f
}

// attachedFeatures are those of a cluster the suite did not build: the Job
// controller's by its minor version, native sidecars as its API server
// showed them (their gate may be off), no gates of ours, no powers.
func attachedFeatures(minor int, nativeSidecars bool) Features {
	return Features{NativeSidecars: nativeSidecars, JobVerdictFirst: featuresOf(minor).JobVerdictFirst}
}

// kubernetesDir holds one module per pinned version.
func kubernetesDir(repo string) string { return filepath.Join(repo, "e2e", "kubernetes") }

// pinnedVersions reads every module below e2e/kubernetes/, oldest first.
func pinnedVersions(repo string) ([]Version, error) {
	mods, err := filepath.Glob(filepath.Join(kubernetesDir(repo), "*", "go.mod"))
	if err != nil {
		return nil, err
	}
	var out []Version
	for _, mod := range mods {
		v, err := readPin(mod)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no Kubernetes version is pinned: %s holds no module (see e2e/README.md)", kubernetesDir(repo))
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].minor < out[j].minor || out[i].minor == out[j].minor && out[i].patch < out[j].patch
	})
	return out, nil
}

// readPin reads the k8s.io/kubernetes and etcd server versions a module's
// go.mod requires.
func readPin(gomod string) (Version, error) {
	f, err := os.Open(gomod)
	if err != nil {
		return Version{}, err
	}
	defer f.Close()
	v := Version{Module: filepath.Dir(gomod)}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(sc.Text()), "require "))
		if len(fields) >= 2 {
			switch fields[0] {
			case "k8s.io/kubernetes":
				v.Kube = fields[1]
			case "go.etcd.io/etcd/server/v3":
				v.Etcd = fields[1]
			}
		}
	}
	if err := sc.Err(); err != nil {
		return Version{}, err
	}
	if v.Kube == "" || v.Etcd == "" {
		return Version{}, fmt.Errorf("%s must require k8s.io/kubernetes and go.etcd.io/etcd/server/v3 (found %q, %q)", gomod, v.Kube, v.Etcd)
	}
	var ok bool
	if v.minor, v.patch, ok = parseRelease(v.Kube); !ok {
		return Version{}, fmt.Errorf("%s: k8s.io/kubernetes %s is not a v1.MINOR.PATCH release", gomod, v.Kube)
	}
	return v, nil
}

// parseRelease splits v1.MINOR.PATCH (the v optional).
func parseRelease(s string) (minor, patch int, ok bool) {
	parts := strings.Split(strings.TrimPrefix(s, "v"), ".")
	if len(parts) != 3 || parts[0] != "1" {
		return 0, 0, false
	}
	minor, err1 := strconv.Atoi(parts[1])
	patch, err2 := strconv.Atoi(parts[2])
	return minor, patch, err1 == nil && err2 == nil
}

// chooseVersion picks the version to run from the pinned ones (oldest
// first): want "" is the newest; else v1.30.14 or 1.30.14 (that release),
// or v1.30 or 1.30 (that minor's pinned release).
func chooseVersion(pinned []Version, want string) (Version, error) {
	if len(pinned) == 0 {
		return Version{}, fmt.Errorf("no Kubernetes version is pinned")
	}
	if want == "" {
		return pinned[len(pinned)-1], nil
	}
	norm := "v" + strings.TrimPrefix(strings.TrimSpace(want), "v")
	for _, v := range pinned {
		if v.Kube == norm || strings.TrimSuffix(v.Kube, "."+strconv.Itoa(v.patch)) == norm {
			return v, nil
		}
	}
	var names []string
	for _, v := range pinned {
		names = append(names, v.Kube)
	}
	return Version{}, fmt.Errorf("Kubernetes %q is not pinned (pinned: %s); pin it with `sh e2e/kubernetes/pin.sh v1.MINOR.PATCH`",
		want, strings.Join(names, ", "))
}

// Versions are the pinned Kubernetes versions, oldest first: what
// Config.Kubernetes may name. The last is the default.
func Versions() ([]Version, error) {
	repo, err := FindRepo()
	if err != nil {
		return nil, err
	}
	return pinnedVersions(repo)
}
