package webhook

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/version"
)

// TestProjectedPatch: the patch of the parts injection changes applies to
// the same Pod as the patch of the whole Pod, without carrying (or
// decoding again) what injection does not change; a change elsewhere
// falls back to the whole Pod.
func TestProjectedPatch(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"a": "b"}},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{
			{Name: "job", Image: "busybox", Command: []string{"/job"}, Env: []corev1.EnvVar{{Name: "BIG", Value: big}}},
			{Name: "proxy", Image: "busybox", Args: []string{"--port=1"}, VolumeMounts: []corev1.VolumeMount{{Name: "v", MountPath: "/v"}}},
		}, Volumes: []corev1.Volume{{Name: "v"}}},
	}
	raw, _ := json.Marshal(pod)
	res, err := inject.Inject(inject.Input{Spec: pod.Spec, Images: map[string]inject.ImageConfig{"busybox": {Entrypoint: []string{"/bin/sh"}}}, Installer: version.Image})
	if err != nil {
		t.Fatal(err)
	}
	injected := pod.DeepCopy()
	injected.Spec, injected.Annotations = res.Spec, res.Annotations
	relabelled := injected.DeepCopy()
	relabelled.Labels["c"] = "d"
	for _, after := range []*corev1.Pod{injected, relabelled} {
		if onlyProjected(pod, after) != (after == injected) {
			t.Fatalf("onlyProjected = %v", !(after == injected))
		}
		ops, err := podPatch(raw, pod, after)
		if err != nil {
			t.Fatal(err)
		}
		patch, _ := json.Marshal(ops)
		if after == injected && bytes.Contains(patch, []byte(big[:1000])) {
			t.Error("the projected patch carries the environment")
		}
		full, _ := Diff(mustJSON(pod), mustJSON(after))
		full, _ = Anchor(raw, full)
		if got, want := apply(t, raw, ops), apply(t, raw, full); !bytes.Equal(got, want) {
			t.Errorf("the patches differ in effect:\n%.500s\n%.500s", got, want)
		}
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func apply(t *testing.T, raw []byte, ops []Operation) []byte {
	t.Helper()
	patch, err := jsonpatch.DecodePatch(mustJSON(ops))
	if err != nil {
		t.Fatal(err)
	}
	out, err := patch.Apply(raw)
	if err != nil {
		t.Fatalf("%s: %v", mustJSON(ops), err)
	}
	var v any
	json.Unmarshal(out, &v)
	return mustJSON(v) // canonical: keys sorted
}
