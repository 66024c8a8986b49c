package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "sigs.k8s.io/json"
)

// TestWithoutManagedFields: metadata.managedFields is cut, wherever it is
// among metadata's members, with its comma; anything else, or an
// unusual shape, is left as it is.
func TestWithoutManagedFields(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"metadata":{"name":"a","managedFields":[{"f":{"x":"}]"}}],"uid":"u"},"spec":{}}`, `{"metadata":{"name":"a","uid":"u"},"spec":{}}`},
		{`{"metadata":{"name":"a","managedFields":[]},"spec":{}}`, `{"metadata":{"name":"a"},"spec":{}}`},
		{`{"metadata":{"managedFields":[],"name":"a"}}`, `{"metadata":{"name":"a"}}`},
		{`{"metadata":{"managedFields":null}}`, `{"metadata":{}}`},
		{` { "spec" : {"a":"\"}"} , "metadata" : { "name" : "a" , "managedFields" : [ 1 , 2 ] } } `, ` { "spec" : {"a":"\"}"} , "metadata" : { "name" : "a" } } `},
		{`{"meta\u0064ata":{"managedFields":[]}}`, `{"meta\u0064ata":{}}`}, // keys are read as a decoder reads them
		// Left as they are.
		{`{"metadata":{"name":"a"}}`, `{"metadata":{"name":"a"}}`},
		{`{"metadata":{"managedFields":[]},"metadata":{"managedFields":[]}}`, `{"metadata":{"managedFields":[]},"metadata":{"managedFields":[]}}`},
		{`{"metadata":{"managedFields":[],"managedFields":[]}}`, `{"metadata":{"managedFields":[],"managedFields":[]}}`},
		{`{"metadata":{"managed\u0046ields":[]}}`, `{"metadata":{"managed\u0046ields":[]}}`}, // not looked for: no Pod's writer escapes it
		{`{"spec":{"metadata":{"managedFields":[]}}}`, `{"spec":{"metadata":{"managedFields":[]}}}`},
		{`{"metadata":null}`, `{"metadata":null}`},
		{`[]`, `[]`},
	} {
		if got := string(withoutManagedFields([]byte(tc.in))); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.in, got, tc.want)
		}
	}
}

// FuzzWithoutManagedFields: for any JSON object, what is left is JSON and
// reads, as the Pod's readers read it, as the object without
// metadata.managedFields, or is the object itself.
func FuzzWithoutManagedFields(f *testing.F) {
	f.Add([]byte(`{"metadata":{"name":"a","managedFields":[{"f":{"x":"}]"}}],"uid":"u"},"spec":{}}`))
	f.Add([]byte(`{"metadata":{"managedFields":"\\\"","a":[{}]}}`))
	f.Add([]byte(` {"metadata" :{ "managedFields":-1e5 } }`))
	f.Fuzz(func(t *testing.T, in []byte) {
		var before map[string]any
		if kjson.UnmarshalCaseSensitivePreserveInts(in, &before) != nil || !json.Valid(in) {
			return // the review holds only valid JSON
		}
		out := withoutManagedFields(in)
		var after map[string]any
		if err := kjson.UnmarshalCaseSensitivePreserveInts(out, &after); err != nil {
			t.Fatalf("%s became %s: %v", in, out, err)
		}
		if bytes.Equal(out, in) {
			return
		}
		meta, _ := before["metadata"].(map[string]any)
		if _, ok := meta["managedFields"]; !ok {
			t.Fatalf("%s: cut %s, with no managedFields", in, out)
		}
		delete(meta, "managedFields")
		if !reflect.DeepEqual(before, after) {
			t.Fatalf("%s became %s: %v, want %v", in, out, after, before)
		}
	})
}

// TestManagedFieldsChangeNothing: the webhook answers a Pod with
// managedFields, read without them, as it answered it read whole.
func TestManagedFieldsChangeNothing(t *testing.T) {
	c := &Config{Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	fields := &metav1.FieldsV1{Raw: []byte(`{"f:metadata":{"f:labels":{".":{},"f:job-name":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"job\"}":{".":{},"f:command":{}}}}}`)}
	pod := func(annotations map[string]string) *corev1.Pod {
		return &corev1.Pod{
			TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{GenerateName: "export-", Namespace: "jobs", Annotations: annotations,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "export", UID: "u1"}},
				ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager", Operation: "Update", FieldsType: "FieldsV1", FieldsV1: fields}}},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{
				{Name: "job", Image: "busybox:1.37", Command: []string{"/job"}}, {Name: "proxy", Image: "busybox:1.37", Command: []string{"/proxy"}}}},
		}
	}
	for _, p := range []*corev1.Pod{pod(nil), pod(map[string]string{"a": "b"})} {
		raw, _ := json.Marshal(p)
		req := &admissionv1.AdmissionRequest{UID: "u", Operation: admissionv1.Create, Namespace: "jobs",
			Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}, Object: runtime.RawExtension{Raw: raw}}
		whole := c.Review(context.Background(), req)
		body, _ := json.Marshal(admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}, Request: req})
		rec := httptest.NewRecorder()
		c.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mutate", bytes.NewReader(body)))
		var review admissionv1.AdmissionReview
		if err := json.Unmarshal(rec.Body.Bytes(), &review); err != nil || review.Response == nil {
			t.Fatalf("%s: %v", rec.Body, err)
		}
		if !bytes.Equal(whole.Patch, review.Response.Patch) || len(whole.Patch) == 0 {
			t.Errorf("read whole: %s\nwithout managedFields: %s", whole.Patch, review.Response.Patch)
		}
	}
}
