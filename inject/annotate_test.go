package inject

import (
	"encoding/json"
	"testing"
)

// TestAnnotateOps: the annotation lands whether metadata and its
// annotations are there, null or absent, and nothing else changes.
func TestAnnotateOps(t *testing.T) {
	for _, raw := range []string{
		`{"spec":{}}`,
		`{"metadata":null,"spec":{}}`,
		`{"metadata":{"name":"p"},"spec":{}}`,
		`{"metadata":{"name":"p","annotations":null},"spec":{}}`,
		`{"metadata":{"name":"p","annotations":{"a":"b"}},"spec":{}}`,
	} {
		out, err := Apply([]byte(raw), AnnotateOps([]byte(raw), AnnotationSkipped, "why"))
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		var got struct {
			Metadata struct {
				Name        string            `json:"name"`
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
			Spec map[string]any `json:"spec"`
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		var was struct {
			Metadata *struct {
				Name        string            `json:"name"`
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		}
		json.Unmarshal([]byte(raw), &was)
		wantAnnotations := 1
		if was.Metadata != nil {
			wantAnnotations += len(was.Metadata.Annotations)
			if got.Metadata.Name != was.Metadata.Name {
				t.Errorf("%s: name %q", raw, got.Metadata.Name)
			}
		}
		if got.Metadata.Annotations[AnnotationSkipped] != "why" || len(got.Metadata.Annotations) != wantAnnotations || got.Spec == nil {
			t.Errorf("%s: became %s", raw, out)
		}
	}
}
