package webhook

import (
	"bytes"
	"encoding/json"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestAppendReview: the answers appendReview writes are json.Marshal's,
// byte for byte, strings that need escaping included, and it declines an
// answer with a status or audit annotations.
func TestAppendReview(t *testing.T) {
	jsonPatch := admissionv1.PatchTypeJSONPatch
	odd := admissionv1.PatchType("a<b")
	v1 := metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}
	for _, c := range []struct {
		name    string
		meta    metav1.TypeMeta
		resp    *admissionv1.AdmissionResponse
		written bool
	}{
		{"allowed", v1, &admissionv1.AdmissionResponse{UID: "u-1", Allowed: true}, true},
		{"a patch", v1, &admissionv1.AdmissionResponse{UID: "u", Allowed: true, Patch: []byte(`[{"op":"add","path":"/a","value":"<&>"}]`), PatchType: &jsonPatch}, true},
		{"an empty patch", v1, &admissionv1.AdmissionResponse{UID: "u", Allowed: true, Patch: []byte{}}, true},
		{"warnings", v1, &admissionv1.AdmissionResponse{UID: "u", Allowed: true, Warnings: []string{"one", "two: 'x' (y)"}}, true},
		{"no warnings", v1, &admissionv1.AdmissionResponse{UID: "u", Allowed: true, Warnings: []string{}}, true},
		{"no meta", metav1.TypeMeta{}, &admissionv1.AdmissionResponse{UID: "", Allowed: false}, true},
		{"only a kind", metav1.TypeMeta{Kind: "AdmissionReview"}, &admissionv1.AdmissionResponse{UID: "u", Allowed: true}, true},
		{"a warning with a quote", v1, &admissionv1.AdmissionResponse{UID: "u", Warnings: []string{`say "x"`}}, true},
		{"a warning for HTML", v1, &admissionv1.AdmissionResponse{UID: "u", Warnings: []string{"a & b"}}, true},
		{"a warning not ASCII", v1, &admissionv1.AdmissionResponse{UID: "u", Warnings: []string{"größer"}}, true},
		{"a uid with a line break", v1, &admissionv1.AdmissionResponse{UID: "u\n"}, true},
		{"a uid with DEL", v1, &admissionv1.AdmissionResponse{UID: "u\x7f"}, true},
		{"a kind with a backslash", metav1.TypeMeta{Kind: `a\b`}, &admissionv1.AdmissionResponse{UID: "u"}, true},
		{"an odd patch type", v1, &admissionv1.AdmissionResponse{UID: "u", PatchType: &odd}, true},
		{"a status", v1, &admissionv1.AdmissionResponse{UID: "u", Result: &metav1.Status{Code: 503, Message: "later"}}, false},
		{"audit annotations", v1, &admissionv1.AdmissionResponse{UID: "u", Allowed: true, AuditAnnotations: map[string]string{"a": "b"}}, false},
		{"no response", v1, nil, false},
	} {
		got, ok := appendReview(nil, c.meta, c.resp)
		if ok != c.written {
			t.Errorf("%s: written %v, want %v", c.name, ok, c.written)
			continue
		}
		want, err := json.Marshal(admissionv1.AdmissionReview{TypeMeta: c.meta, Response: c.resp})
		if err != nil {
			t.Fatal(err)
		}
		if ok && !bytes.Equal(got, want) {
			t.Errorf("%s:\nwrote     %s\njson.Marshal %s", c.name, got, want)
		}
	}
}
