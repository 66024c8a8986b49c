package webhook

import (
	"encoding/json"
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/version"
)

// TestAnnotationsAfter: the annotations the webhook counts are those the
// API server gets by applying inject's ops: for a Pod without metadata,
// without annotations, with some, and injected before with annotations
// changed since (the old record removed, a new one added).
func TestAnnotationsAfter(t *testing.T) {
	spec := corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{
		{Name: "job", Image: "busybox", Command: []string{"/job"}}, {Name: "proxy", Image: "busybox", Command: []string{"/proxy"}}}}
	pod := func(meta *metav1.ObjectMeta) []byte {
		doc := map[string]any{"spec": spec}
		if meta != nil {
			doc["metadata"] = meta
		}
		b, _ := json.Marshal(doc)
		return b
	}
	first := pod(&metav1.ObjectMeta{Annotations: map[string]string{"a": "b"}})
	injected, err := inject.Apply(first, injectOps(t, first))
	if err != nil {
		t.Fatal(err)
	}
	var again map[string]any
	json.Unmarshal(injected, &again)
	again["metadata"].(map[string]any)["annotations"].(map[string]any)[inject.Prefix+"grace.proxy"] = "20s"
	changed, _ := json.Marshal(again)
	for name, raw := range map[string][]byte{
		"no metadata":                    pod(nil),
		"no annotations":                 pod(&metav1.ObjectMeta{Name: "p"}),
		"annotations":                    first,
		"injected before, changed since": changed,
	} {
		var before corev1.Pod
		json.Unmarshal(raw, &before)
		ops := injectOps(t, raw)
		patched, err := inject.Apply(raw, ops)
		if err != nil {
			t.Fatal(err)
		}
		var after corev1.Pod
		json.Unmarshal(patched, &after)
		if got := annotationsAfter(before.Annotations, ops); !maps.Equal(got, after.Annotations) {
			t.Errorf("%s: counted %v, the API server gets %v", name, got, after.Annotations)
		}
	}
}

// injectOps is inject's ops for the Pod raw, every command given (no
// lookup), as the webhook plans them before its own checks.
func injectOps(t *testing.T, raw []byte) []inject.Op {
	t.Helper()
	plan, err := inject.Prepare(raw)
	if err != nil {
		t.Fatal(err)
	}
	res, err := plan.Inject(nil, version.Image)
	if err != nil {
		t.Fatal(err)
	}
	return res.Ops
}
