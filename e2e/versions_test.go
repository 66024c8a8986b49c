//go:build e2e

package e2e

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// The suite runs on every pinned Kubernetes version (make e2e
// K8S_VERSION=...). What differs between them is decided by the cluster
// package (kube.Features); the tests ask here.

// requireNativeSidecars skips a test that needs native sidecars on a
// cluster without them.
func requireNativeSidecars(t *testing.T) {
	t.Helper()
	if !kube.NativeSidecars() {
		t.Skipf("Kubernetes %s runs here without native sidecars (%s): a Pod with a restartPolicy Always init container never starts",
			kube.Version(), kube.Features().FeatureGates)
	}
}

// usesNativeSidecars says whether a Pod template has a native sidecar.
func usesNativeSidecars(spec *corev1.PodSpec) bool {
	for _, c := range spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			return true
		}
	}
	return false
}

// completeReason is the reason of a Job's Complete condition: before the
// controller recorded its verdict first (Features.JobVerdictFirst), it gave
// none.
func completeReason() string {
	if kube.Features().JobVerdictFirst {
		return batchv1.JobReasonCompletionsReached
	}
	return ""
}

// On a cluster the suite attached to (E2E_KUBECONFIG) it has no powers
// past the API (cluster.Powers); a test that needs one skips, saying which
// and what for. On the cluster make e2e builds, every test runs.

// requireNodeProcesses skips a test that reaches into the node: its
// processes, its runtime, a folder it shares with this machine.
func requireNodeProcesses(t *testing.T, what string) {
	t.Helper()
	requirePower(t, kube.Features().NodeProcesses, "NodeProcesses", what)
}

// requireLoopback skips a test that serves the API server or the node
// something on this machine's 127.0.0.1: a webhook, a registry.
func requireLoopback(t *testing.T, what string) {
	t.Helper()
	requirePower(t, kube.Features().Loopback, "Loopback", what)
}

func requirePower(t *testing.T, have bool, power, what string) {
	t.Helper()
	if !have {
		t.Skipf("needs Powers.%s, %s: only on the cluster make e2e builds here, not on the attached %s (E2E_KUBECONFIG)",
			power, what, kube.Version())
	}
}
