//go:build e2e

package e2e

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/job-signal/job-signal/inject"
)

// What the form of an admitted Pod is (the pair or native sidecars), as
// the Pod and its record annotation show it, and the webhook set up in a
// mode the way the chart's mode value sets it.

// chartModeFlags are the webhook's flags for the chart's mode value, as
// the chart's Deployment gives them (what `helm install --set mode=MODE`
// runs): --mode and --detect-interval.
func chartModeFlags(t *testing.T, mode inject.Mode) []string {
	t.Helper()
	source, objects := renderChart(t, "mode="+string(mode))
	var flags []string
	for _, obj := range objects {
		if d, ok := obj.(*appsv1.Deployment); ok {
			for _, c := range d.Spec.Template.Spec.Containers {
				for _, a := range c.Args {
					if name, _, _ := strings.Cut(a, "="); name == "--mode" || name == "--detect-interval" {
						flags = append(flags, a)
					}
				}
			}
		}
	}
	if !slices.Contains(flags, "--mode="+string(mode)) {
		t.Fatalf("%s: the Deployment's args %v lack --mode=%s: the chart's mode value does not reach the webhook", source, flags, mode)
	}
	return flags
}

// injectedRecord is the part of the record annotation that says which form
// inject chose and why.
type injectedRecord struct {
	Form   inject.Form `json:"form"`
	Reason string      `json:"reason"`
}

func recordOf(t *testing.T, pod *corev1.Pod) injectedRecord {
	t.Helper()
	var r injectedRecord
	text, ok := pod.Annotations[inject.AnnotationInjected]
	if !ok {
		t.Fatalf("Pod %s has no annotation %s: not injected (annotations %v)", pod.Name, inject.AnnotationInjected, pod.Annotations)
	}
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		t.Fatalf("Pod %s: annotation %s: %v", pod.Name, inject.AnnotationInjected, err)
	}
	if r.Form == "" {
		r.Form = inject.FormPair // a record without a form is the pair's
	}
	return r
}

// waitAutoDetected waits until the webhook has checked its cluster (in
// mode auto it gives the pair until then, whatever the cluster), and
// checks that it found what the cluster has.
func waitAutoDetected(t *testing.T, hook *webhookProcess) {
	t.Helper()
	checked := hook.waitEvent(t, time.Minute, func(e webhookEvent) bool { return e.Msg == "cluster checked" })
	if checked.NativeSidecars == nil || *checked.NativeSidecars != kube.NativeSidecars() {
		t.Fatalf("the webhook found %+v; the cluster has native sidecars: %v", checked, kube.NativeSidecars())
	}
}

// expectPair: the Pod has docs/layout.md's pair around original's
// containers, and a record of the form pair. auto: the webhook chose it in
// mode auto, so the record says why; on a cluster with native sidecars
// the reason contains keyword.
func expectPair(t *testing.T, pod *corev1.Pod, original corev1.PodSpec, auto bool, keyword string) {
	t.Helper()
	expectLayout(t, pod, original)
	r := recordOf(t, pod)
	if r.Form != inject.FormPair {
		t.Errorf("Pod %s: record says form %q, want %q", pod.Name, r.Form, inject.FormPair)
	}
	switch {
	case !auto:
	case r.Reason == "":
		t.Errorf("Pod %s: the pair in mode auto, with no reason in the record %s", pod.Name, pod.Annotations[inject.AnnotationInjected])
	case kube.NativeSidecars() && !strings.Contains(strings.ToLower(r.Reason), keyword):
		t.Errorf("Pod %s: the pair's reason %q does not say %q", pod.Name, r.Reason, keyword)
	}
	if auto {
		t.Logf("Pod %s: the pair, because %s", pod.Name, r.Reason)
	}
}

// expectNative: nothing of job-signal in the Pod (no volumes, no install
// container, no wrapper), its sidecars moved to the init containers with
// restartPolicy Always in order (the containers' order when nil), after
// the Pod's own init containers, with their commands unchanged; a
// readinessProbe became a startupProbe; main left as it was.
func expectNative(t *testing.T, pod *corev1.Pod, original corev1.PodSpec, order []string) {
	t.Helper()
	if r := recordOf(t, pod); r.Form != inject.FormNative {
		t.Errorf("Pod %s: record says form %q, want %q: %s", pod.Name, r.Form, inject.FormNative, pod.Annotations[inject.AnnotationInjected])
	}
	for _, v := range pod.Spec.Volumes {
		if v.Name == inject.StateVolume || v.Name == inject.BinVolume {
			t.Errorf("Pod %s: native, yet it has job-signal's volume %s", pod.Name, v.Name)
		}
	}
	byName := map[string]corev1.Container{}
	for _, c := range original.Containers {
		byName[c.Name] = c
	}
	if order == nil {
		for _, c := range original.Containers[1:] {
			order = append(order, c.Name)
		}
	}
	var inits, mains []string
	for _, c := range pod.Spec.InitContainers {
		inits = append(inits, c.Name)
		if c.Name == inject.InitContainer || wrapper(c) != "" {
			t.Errorf("Pod %s: native, yet init container %s is job-signal's: %q", pod.Name, c.Name, c.Command)
		}
	}
	for _, c := range pod.Spec.Containers {
		mains = append(mains, c.Name)
	}
	ownInits := len(original.InitContainers)
	if !slices.Equal(inits[min(ownInits, len(inits)):], order) || !slices.Equal(mains, []string{original.Containers[0].Name}) {
		t.Fatalf("Pod %s: init containers %v and containers %v, want %d of its own, then %v, and %s alone", pod.Name, inits, mains, ownInits, order, original.Containers[0].Name)
	}
	for _, c := range append(pod.Spec.InitContainers[ownInits:], pod.Spec.Containers...) {
		want := byName[c.Name]
		if !slices.Equal(c.Command, want.Command) || !slices.Equal(c.Args, want.Args) {
			t.Errorf("container %s runs %q %q, the Job says %q %q", c.Name, c.Command, c.Args, want.Command, want.Args)
		}
		if c.Name == original.Containers[0].Name {
			continue
		}
		if c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways {
			t.Errorf("sidecar %s: restartPolicy %v, want Always", c.Name, c.RestartPolicy)
		}
		if p := want.ReadinessProbe; p != nil && want.StartupProbe == nil && (c.StartupProbe == nil || !equality.Semantic.DeepEqual(c.StartupProbe.ProbeHandler, p.ProbeHandler)) {
			t.Errorf("sidecar %s: its readinessProbe did not become a startupProbe: %+v", c.Name, c.StartupProbe)
		}
	}
}

// expectSameEnd: the two Pods of a case, one with the pair and one in
// the form auto chose, ended alike: the same phase, restarts of main and
// exit codes, the case's loose sidecars aside (0 with the pair; 0 or 143
// when the runtime stopped a native one).
func expectSameEnd(t *testing.T, c nativeCase, pair, auto *corev1.Pod) {
	t.Helper()
	if pair.Status.Phase != auto.Status.Phase {
		t.Errorf("phase %s with the pair, %s in mode auto", pair.Status.Phase, auto.Status.Phase)
	}
	ends := func(p *corev1.Pod) (map[string]int32, int32) {
		codes, restarts := map[string]int32{}, int32(-1)
		for _, list := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
			for _, s := range list {
				if s.Name == inject.InitContainer {
					continue
				}
				if s.Name == "main" {
					restarts = s.RestartCount
				}
				codes[s.Name] = -1 // not terminated
				if s.State.Terminated != nil {
					codes[s.Name] = s.State.Terminated.ExitCode
				}
			}
		}
		return codes, restarts
	}
	pairCodes, pairRestarts := ends(pair)
	autoCodes, autoRestarts := ends(auto)
	if pairRestarts != autoRestarts {
		t.Errorf("main restarted %d times with the pair, %d in mode auto", pairRestarts, autoRestarts)
	}
	for _, codes := range []map[string]int32{pairCodes, autoCodes} {
		if len(codes) != len(pairCodes) {
			t.Errorf("containers ended: %v with the pair, %v in mode auto", pairCodes, autoCodes)
		}
	}
	for name, got := range pairCodes {
		want := c.codes[name]
		if got != want {
			t.Errorf("with the pair, container %s exited %d, want %d", name, got, want)
		}
		if a := autoCodes[name]; a != want && !(slices.Contains(c.loose, name) && recordOf(t, auto).Form == inject.FormNative && a == 143) {
			t.Errorf("in mode auto, container %s exited %d, want %d as with the pair", name, a, want)
		}
	}
	t.Logf("exit codes: with the pair %v, in mode auto %v; phase %s", pairCodes, autoCodes, auto.Status.Phase)
}
