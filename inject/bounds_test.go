package inject_test

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/job-signal/job-signal/inject"
)

// TestOneLine: a message from outside, as either front end writes it, is
// one line of printable text of at most the bound, cut at a character
// boundary.
func TestOneLine(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"  a\n\tb\r\n  c  ", "a b c"},
		{"a\x00\x1b[31mb", "a [31mb"},
		{"\xff\xfe", ""},
		{strings.Repeat("é", 600), strings.Repeat("é", 510) + "..."},
		{strings.Repeat("x\n", 1<<20), strings.Repeat("x ", 510) + "x..."},
	} {
		got := inject.OneLine(tc.in, inject.MaxReason)
		if got != tc.want {
			t.Errorf("OneLine(%.40q) = %.80q, want %.80q", tc.in, got, tc.want)
		}
		if len(got) > inject.MaxReason || !utf8.ValidString(got) || strings.ContainsAny(got, "\n\r\t") {
			t.Errorf("OneLine(%.40q): %d bytes, valid %v", tc.in, len(got), utf8.ValidString(got))
		}
	}
}

// TestAnnotationsAfter: the annotations counted against the API server's
// limit are those it gets by applying inject's ops: for a Pod without
// metadata, without annotations, with some, and injected before with
// annotations changed since (the old record removed, a new one added).
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
	injected, err := injectTemplate(first, nil)
	if err != nil {
		t.Fatal(err)
	}
	var again map[string]any
	json.Unmarshal(injected.Template, &again)
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
		res, err := injectTemplate(raw, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := inject.AnnotationsAfter(before.Annotations, res.Ops); !maps.Equal(got, res.Annotations) {
			t.Errorf("%s: counted %v, the API server gets %v", name, got, res.Annotations)
		}
	}
}

// TestCheckAnnotations: ops that take the annotations over the API
// server's limit are refused, naming it; ops that keep them within are not.
func TestCheckAnnotations(t *testing.T) {
	spec := corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{
		{Name: "job", Image: "busybox", Command: []string{"/job"}}, {Name: "proxy", Image: "busybox", Command: []string{"/proxy"}}}}
	for _, tc := range []struct {
		size int
		want string
	}{
		{200 << 10, ""},
		{inject.TotalAnnotationLimit - 100, "over the API server's limit of 262144"},
	} {
		annotations := map[string]string{"example.com/big": strings.Repeat("x", tc.size)}
		res, err := injectSpec(spec, annotations, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = inject.CheckAnnotations(annotations, res.Ops)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%d bytes of annotations: %v, want %q", tc.size, err, tc.want)
		}
	}
}
