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
