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
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/job-signal/job-signal/inject"
)

// What the form of an admitted Pod is (the pair or native sidecars), as
// the Pod and its record annotation show it, and the webhook set up in a
// mode the way the chart's mode value sets it.

// chartModeFlags are the webhook's flags for the chart's mode value, as
// the chart's Deployment gives them (what `helm install --set mode=MODE`
// runs): its --mode, and the namespace it checks the cluster in, the
// release's (its Pod's, where the chart gives no --namespace). The chart's
// Roles there (the dry-run Pod of that check) are created as helm would.
func chartModeFlags(t *testing.T, mode inject.Mode) []string {
	t.Helper()
	source, objects := renderChart(t, "mode="+string(mode))
	var flags []string
	namespace := false
	for _, obj := range objects {
		switch o := obj.(type) {
		case *appsv1.Deployment:
			for _, c := range o.Spec.Template.Spec.Containers {
				for _, a := range c.Args {
					name, _, _ := strings.Cut(a, "=")
					if name == "--mode" || name == "--namespace" {
						flags = append(flags, a)
						namespace = namespace || name == "--namespace"
					}
				}
			}
		case *rbacv1.Role:
			createChartObject(t, o, func() error {
				_, err := kube.Client().RbacV1().Roles(chartNamespace).Create(t.Context(), o, metav1.CreateOptions{})
				return err
			})
		case *rbacv1.RoleBinding:
			createChartObject(t, o, func() error {
				_, err := kube.Client().RbacV1().RoleBindings(chartNamespace).Create(t.Context(), o, metav1.CreateOptions{})
				return err
			})
		}
	}
	if len(flags) == 0 && mode != inject.ModeAuto { // auto is the webhook's default
		t.Fatalf("%s: the Deployment's args have no --mode: the chart's mode value does not reach the webhook", source)
	}
	if !namespace {
		flags = append(flags, "--namespace="+chartNamespace)
	}
	return flags
}

// createChartObject creates one of the chart's objects in its namespace
// (made by webhookKubeconfig's first call); one made already is fine.
func createChartObject(t *testing.T, obj metav1.Object, create func() error) {
	t.Helper()
	if ns := obj.GetNamespace(); ns != "" && ns != chartNamespace {
		return // another namespace's (pull secrets): not the webhook's own
	}
	obj.SetNamespace(chartNamespace)
	if _, err := kube.Client().CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: chartNamespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if err := create(); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating the chart's %s: %v", obj.GetName(), err)
	}
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

// waitAutoDetected waits until the webhook in mode auto has found native
// sidecars on a cluster that has them: until then it gives the pair (the
// cluster not known yet). A dry-run Pod that maps onto native sidecars
// comes back native once it has. Without native sidecars there is nothing
// to wait for: the pair before the check and after.
func waitAutoDetected(t *testing.T, s *space) {
	t.Helper()
	if !kube.NativeSidecars() {
		return
	}
	probe := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "native-probe"},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{
			{Name: "main", Image: busyboxImage, ImagePullPolicy: corev1.PullNever, Command: []string{"true"}},
			busyboxSidecar("sidecar")}},
	}
	began := time.Now()
	deadline := began.Add(time.Minute)
	for {
		got, err := kube.Client().CoreV1().Pods(s.ns).Create(t.Context(), probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil && inject.Injected(got.Annotations) {
			if r := recordOf(t, got); r.Form == inject.FormNative {
				t.Logf("the webhook in mode auto gives native sidecars %v after it was registered", time.Since(began).Round(time.Millisecond))
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the webhook in mode auto still gives the pair a minute after it was registered on a cluster with native sidecars (last: %v, annotations %v)", err, got.GetAnnotations())
		}
		time.Sleep(200 * time.Millisecond) // the webhook's check has no event for us: poll, bounded
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
