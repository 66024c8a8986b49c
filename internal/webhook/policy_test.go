package webhook

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// TestVerdict: a Pod that needs job-signal is denied for now when the
// failure may pass, unless the operator chose Ignore; everything else is
// admitted without job-signal.
func TestVerdict(t *testing.T) {
	for _, tc := range []struct {
		needs, transient bool
		policy           string
		want             outcome
	}{
		{true, true, PolicyFail, denied},
		{true, true, "", denied},
		{true, true, PolicyIgnore, skipped},
		{true, false, PolicyFail, skipped},  // a lasting refusal: retrying would hold the Job up for ever
		{false, true, PolicyFail, skipped},  // one container: completes anyway
		{false, false, PolicyFail, skipped}, // nothing to wait for
	} {
		if got := verdict(tc.needs, tc.transient, tc.policy); got != tc.want {
			t.Errorf("verdict(needs %v, transient %v, %q) = %s, want %s", tc.needs, tc.transient, tc.policy, got, tc.want)
		}
	}
}

// TestPeekUID: the uid of a request is found in the start of its body,
// cut anywhere after it; not before.
func TestPeekUID(t *testing.T) {
	review := `{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"kind":{"group":"","version":"v1","kind":"Pod"},"uid":"7a3c","object":{"metadata":{"name":"x"}}}}`
	for _, tc := range []struct {
		in   string
		want types.UID
	}{
		{review, "7a3c"},
		{review[:strings.Index(review, `"object"`)+5], "7a3c"},
		{review[:strings.Index(review, `"uid"`)+8], ""},
		{`{"request":{"uid":"u"}}`, "u"},
		{`[1,2]`, ""},
		{``, ""},
		{`{"request":[]}`, ""},
	} {
		if got, _ := peekUID([]byte(tc.in)); got != tc.want {
			t.Errorf("peekUID(%.60q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if _, meta := peekUID([]byte(review[:80])); meta.APIVersion != "admission.k8s.io/v1" || meta.Kind != "AdmissionReview" {
		t.Errorf("type %+v", meta)
	}
}
