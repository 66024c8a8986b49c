package webhook

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	kjson "sigs.k8s.io/json"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/inject/jsonscan"
)

// reviewOf is the AdmissionReview the API server sends for pod's creation.
func reviewOf(t *testing.T, pod *corev1.Pod) string {
	t.Helper()
	raw, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: "7a3c", Operation: admissionv1.Create, Namespace: pod.Namespace,
			Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}, Object: kruntime.RawExtension{Raw: raw}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func sketchPod(annotations map[string]string, owner string, containers int) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: annotations,
		Labels: map[string]string{"app": "x"}}, Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever}}
	if owner != "" {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: owner, Name: "o", UID: "u"}}
	}
	for range containers {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "c", Command: []string{"/c"}})
	}
	return p
}

// TestSketch: a streamed read of an AdmissionReview finds the uid, the
// request's kind and operation and what Decide and needsJobSignal read of
// the Pod, wherever the body is cut, however it escapes its strings;
// strings too long to be what it looks for are read through and dropped.
func TestSketch(t *testing.T) {
	job := reviewOf(t, sketchPod(nil, "Job", 2))
	big := reviewOf(t, sketchPod(map[string]string{"example.com/big": strings.Repeat("\\x", 200<<10)}, "Job", 2))
	for _, tc := range []struct {
		name, in           string
		uid                string
		owner              string
		containers         int
		metadata, spec     bool
		label, restart     string
		kind, op, apiVersn string
	}{
		{name: "whole", in: job, uid: "7a3c", owner: "Job", containers: 2, metadata: true, spec: true, restart: "Never", kind: "Pod", op: "CREATE", apiVersn: "admission.k8s.io/v1"},
		{name: "200 KiB of annotations", in: big, uid: "7a3c", owner: "Job", containers: 2, metadata: true, spec: true, restart: "Never", kind: "Pod", op: "CREATE", apiVersn: "admission.k8s.io/v1"},
		{name: "cut in spec", in: job[:strings.Index(job, `"containers"`)+20], uid: "7a3c", owner: "Job", containers: 1, metadata: true, kind: "Pod", op: "CREATE", apiVersn: "admission.k8s.io/v1"},
		{name: "cut in metadata", in: job[:strings.Index(job, `"ownerReferences"`)+5], uid: "7a3c", kind: "Pod", op: "CREATE", apiVersn: "admission.k8s.io/v1"},
		{name: "cut in uid", in: job[:strings.Index(job, `"uid"`)+8], apiVersn: "admission.k8s.io/v1"},
		{name: "escapes", in: `{"request":{"uid":"u\u0031","object":{"metadata":{"labels":{"job-signal.dev\/inject":"en\u0061bled"},"ownerReferences":null},"spec":{"containers":[{},{"a":[1,{"b":"]"}]}],"restartPolicy":"Never"}}}}`,
			uid: "u1", label: "enabled", containers: 2, metadata: true, spec: true, restart: "Never"},
		{name: "a long uid", in: `{"request":{"uid":"` + strings.Repeat("u", jsonscan.MaxShort+1) + `","object":{"metadata":null}}}`, metadata: true},
		{name: "not an object", in: `[1,2]`},
		{name: "empty", in: ``},
		{name: "request not an object", in: `{"request":[]}`},
		{name: "junk after a value", in: `{"request":{"uid":"u" x}}`, uid: "u"},
		{name: "control character in a string", in: "{\"request\":{\"uid\":\"u\x01\"}}"},
	} {
		sk := sketchOf(strings.NewReader(tc.in))
		owner := ""
		if len(sk.pod.OwnerReferences) > 0 {
			owner = sk.pod.OwnerReferences[0].Kind
		}
		got := []any{string(sk.uid), owner, len(sk.pod.Spec.Containers), sk.metadata, sk.spec, sk.pod.Labels["job-signal.dev/inject"], string(sk.pod.Spec.RestartPolicy), sk.kind, sk.operation, sk.meta.APIVersion}
		want := []any{tc.uid, tc.owner, tc.containers, tc.metadata, tc.spec, tc.label, tc.restart, tc.kind, tc.op, tc.apiVersn}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: got %v, want %v", tc.name, got, want)
				break
			}
		}
	}
}

// TestSketchHoldsLittle: reading a review of 3 MiB, most of it in one
// string, allocates a small fraction of it: a busy webhook holds no body.
func TestSketchHoldsLittle(t *testing.T) {
	in := []byte(reviewOf(t, sketchPod(map[string]string{"example.com/big": strings.Repeat("x", 3<<20)}, "Job", 2)))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	sk := sketchOf(bytes.NewReader(in))
	runtime.ReadMemStats(&after)
	if !sk.spec || sk.uid != "7a3c" {
		t.Fatalf("not read: %+v", sk)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 256<<10 {
		t.Errorf("reading a review of %d bytes allocated %d bytes", len(in), n)
	}
}

// TestServed: from a sketch, a Pod the webhook does not serve, or that
// cannot need job-signal, is told apart from one that may need it; a Pod
// whose metadata was not read is not known.
func TestServed(t *testing.T) {
	whole := func(p *corev1.Pod) sketch {
		return sketch{uid: "u", kind: "Pod", operation: "CREATE", pod: *p, metadata: true, spec: true}
	}
	labelled := func(v string, restart corev1.RestartPolicy) sketch {
		p := sketchPod(nil, "", 2)
		p.Labels["job-signal.dev/inject"] = v
		p.Spec.RestartPolicy = restart
		return whole(p)
	}
	metadataOnly := whole(sketchPod(nil, "Job", 0))
	metadataOnly.spec = false
	rsMetadataOnly := whole(sketchPod(nil, "ReplicaSet", 0))
	rsMetadataOnly.spec = false
	noMetadata := whole(sketchPod(nil, "Job", 2))
	noMetadata.metadata, noMetadata.spec = false, false
	update := whole(sketchPod(nil, "Job", 2))
	update.operation = "UPDATE"
	for _, tc := range []struct {
		name       string
		sk         sketch
		served     bool
		class      string
		containers int
		known      bool
	}{
		{"Job Pod with a sidecar", whole(sketchPod(nil, "Job", 2)), true, "", 2, true},
		{"Job Pod, spec not read", metadataOnly, true, "", 2, true},
		{"Job Pod of one container", whole(sketchPod(nil, "Job", 1)), false, reasonNothingToDo, 0, true},
		{"ReplicaSet Pod", whole(sketchPod(nil, "ReplicaSet", 2)), false, reasonNotSelected, 0, true},
		{"ReplicaSet Pod, spec not read", rsMetadataOnly, false, reasonNotSelected, 0, true},
		{"labelled enabled", labelled("enabled", corev1.RestartPolicyNever), true, "", 2, true},
		{"labelled enabled, restartPolicy Always", labelled("enabled", corev1.RestartPolicyAlways), false, reasonNothingToDo, 0, true},
		{"labelled disabled", labelled("disabled", corev1.RestartPolicyNever), false, reasonOptedOut, 0, true},
		{"an update", update, false, reasonNotPod, 0, true},
		{"metadata not read", noMetadata, false, "", 0, false},
	} {
		pod, class, known := served(tc.sk)
		if (pod != nil) != tc.served || class != tc.class || known != tc.known || pod != nil && len(pod.Spec.Containers) != tc.containers {
			t.Errorf("%s: served %v, class %q, known %v, want %v, %q, %v", tc.name, pod != nil, class, known, tc.served, tc.class, tc.known)
		}
	}
}

// FuzzSketch: on any input the streamed read never panics, and it reads
// to its end every review the API server's decoder reads, finding what
// that decoder finds: the uid, the Pod's owners' kinds, the label, restartPolicy and
// the number of containers.
func FuzzSketch(f *testing.F) {
	f.Add([]byte(`{"request":{"uid":"u\u0031","object":{"metadata":{"labels":{"job-signal.dev\/inject":"enabled"},"ownerReferences":[{"kind":"Job","apiVersion":"batch/v1"}]},"spec":{"containers":[{},{}],"restartPolicy":"Never"}}}}`))
	f.Add([]byte(`{"request":{"uid":"a","uid":"b","object":{"metadata":{"labels":{"x":"y"},"labels":null},"spec":{"containers":null}}}}`))
	f.Add([]byte(`{"request":{"uid":"\ud83d\ude00\ud800","object":{"metadata":{"ownerReferences":[{"kind":"J\u006fb"}]}}}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		sk := sketchOf(bytes.NewReader(in))
		var review admissionv1.AdmissionReview
		if kjson.UnmarshalCaseSensitivePreserveInts(in, &review) != nil {
			return
		}
		var pod corev1.Pod
		if review.Request != nil && len(review.Request.Object.Raw) > 0 && kjson.UnmarshalCaseSensitivePreserveInts(review.Request.Object.Raw, &pod) != nil {
			return // not a Pod: the webhook refuses it whole
		}
		if !sk.whole {
			t.Fatalf("the decoder reads it, the sketch stops early")
		}
		if review.Request == nil || !sk.spec {
			return
		}
		if len(review.Request.UID) <= jsonscan.MaxShort && sk.uid != review.Request.UID {
			t.Errorf("uid %q, the decoder's %q", sk.uid, review.Request.UID)
		}
		if len(sk.pod.Spec.Containers) != len(pod.Spec.Containers) || sk.pod.Spec.RestartPolicy != pod.Spec.RestartPolicy {
			t.Errorf("%d containers, restartPolicy %q; the decoder's %d, %q", len(sk.pod.Spec.Containers), sk.pod.Spec.RestartPolicy, len(pod.Spec.Containers), pod.Spec.RestartPolicy)
		}
		if v := pod.Labels[inject.LabelInject]; len(v) <= jsonscan.MaxShort && sk.pod.Labels[inject.LabelInject] != v {
			t.Errorf("label %q, the decoder's %q", sk.pod.Labels[inject.LabelInject], v)
		}
		if len(sk.pod.OwnerReferences) != len(pod.OwnerReferences) {
			t.Fatalf("%d owners, the decoder's %d", len(sk.pod.OwnerReferences), len(pod.OwnerReferences))
		}
		for i, o := range pod.OwnerReferences {
			if len(o.Kind) <= jsonscan.MaxShort && sk.pod.OwnerReferences[i].Kind != o.Kind {
				t.Errorf("owner %d: kind %q, the decoder's %q", i, sk.pod.OwnerReferences[i].Kind, o.Kind)
			}
		}
	})
}
