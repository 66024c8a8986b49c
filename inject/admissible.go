package inject

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// admissible refuses a Pod (without job-signal) that job-signal cannot
// run in, or that the layout's additions would make one Kubernetes
// refuses. Prepare calls it, before any registry is asked, so that a valid
// Pod never comes out invalid:
//
//   - Windows Pods: job-signal and sidecar-watch are Linux programs, and
//     the install container's image has no Windows variant.
//   - Pod-level resources (spec.resources, on by default since Kubernetes
//     1.34): the API server requires spec.resources.requests to cover what
//     the containers request together, counted as the kubelet counts it
//     (init containers run before the others; the largest need counts).
//     The install init container's requests are part of that.
//
// What else the API server or a LimitRange checks depends on the cluster,
// not the Pod: both front ends fit the install container into the
// namespace's LimitRanges (FitLimitRanges), the webhook always, the plugin
// when online, and check the annotations' size (CheckAnnotations).
func admissible(spec *corev1.PodSpec) error {
	if spec.OS != nil && spec.OS.Name == corev1.Windows {
		return fmt.Errorf("spec.os.name is windows: job-signal and sidecar-watch are Linux programs, so they cannot wrap its containers")
	}
	if os := spec.NodeSelector[corev1.LabelOSStable]; os == string(corev1.Windows) {
		return fmt.Errorf("spec.nodeSelector %s is %s: job-signal and sidecar-watch are Linux programs, so they cannot wrap its containers", corev1.LabelOSStable, os)
	}
	if spec.Resources == nil || len(spec.Resources.Requests) == 0 {
		return nil
	}
	injected := *spec
	injected.InitContainers = append([]corev1.Container{installer()}, spec.InitContainers...)
	aggregate := resourcehelper.AggregateContainerRequests(&corev1.Pod{Spec: injected}, resourcehelper.PodResourcesOptions{ExcludeOverhead: true})
	for _, name := range slices.Sorted(maps.Keys(spec.Resources.Requests)) {
		pod := spec.Resources.Requests[name]
		need, ok := aggregate[name]
		if !resourcehelper.IsSupportedPodLevelResource(name) || !ok || need.Cmp(pod) <= 0 {
			continue
		}
		return fmt.Errorf("spec.resources.requests.%s is %s, less than the containers request together with the %s init container (%s): raise it to at least %s",
			name, pod.String(), InitContainer, need.String(), need.String())
	}
	return nil
}

// installer is the install init container as Inject adds it (its one
// description is installValue's).
func installer() corev1.Container {
	var c corev1.Container
	b, _ := json.Marshal(installValue(""))
	if err := json.Unmarshal(b, &c); err != nil {
		panic(err) // a constant
	}
	return c
}

// isInstaller says whether c is named as the layout's install container.
func isInstaller(c corev1.Container) bool { return c.Name == InitContainer }

// HandWired reports whether a Pod has job-signal added by hand: it runs
// job-signal or sidecar-watch from the layout's directory, or has the
// layout's init container or volumes, without Inject's record. Inject
// refuses such a Pod (Uninject turns it into annotations); the webhook
// leaves it as it is.
func HandWired(spec *corev1.PodSpec, annotations map[string]string) bool {
	if Injected(annotations) {
		return false
	}
	return slices.ContainsFunc(spec.Containers, func(c corev1.Container) bool { return wrapper(first(c.Command)) != "" }) ||
		slices.ContainsFunc(spec.InitContainers, isInstaller) ||
		slices.ContainsFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == StateVolume || v.Name == BinVolume })
}
