package webhook

import (
	"encoding/base64"
	"slices"
	"strconv"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// appendReview appends the review answering with resp as json.Marshal
// writes it, byte for byte, when resp is the common answer: no status, no
// audit annotations, and every string printable ASCII that JSON writes as
// it is. ok is false for any other, which json.Marshal then writes:
// reflecting over the review was a few percent of the webhook's CPU per
// Pod, most of it for an answer of four members.
func appendReview(out []byte, meta metav1.TypeMeta, resp *admissionv1.AdmissionResponse) (_ []byte, ok bool) {
	if resp == nil || resp.Result != nil || len(resp.AuditAnnotations) > 0 {
		return nil, false
	}
	size := 128 + len(meta.Kind) + len(meta.APIVersion) + len(resp.UID) + base64.StdEncoding.EncodedLen(len(resp.Patch))
	if !asIs(meta.Kind) || !asIs(meta.APIVersion) || !asIs(string(resp.UID)) || resp.PatchType != nil && !asIs(string(*resp.PatchType)) {
		return nil, false
	}
	for _, w := range resp.Warnings {
		if !asIs(w) {
			return nil, false
		}
		size += len(w) + 3
	}
	out = append(out, '{')
	out = slices.Grow(out, size)
	if meta.Kind != "" {
		out = strconv.AppendQuote(append(out, `"kind":`...), meta.Kind)
		out = append(out, ',')
	}
	if meta.APIVersion != "" {
		out = strconv.AppendQuote(append(out, `"apiVersion":`...), meta.APIVersion)
		out = append(out, ',')
	}
	out = strconv.AppendQuote(append(out, `"response":{"uid":`...), string(resp.UID))
	out = strconv.AppendBool(append(out, `,"allowed":`...), resp.Allowed)
	if len(resp.Patch) > 0 { // omitempty
		out = append(out, `,"patch":"`...)
		out = base64.StdEncoding.AppendEncode(out, resp.Patch)
		out = append(out, '"')
	}
	if resp.PatchType != nil {
		out = strconv.AppendQuote(append(out, `,"patchType":`...), string(*resp.PatchType))
	}
	if len(resp.Warnings) > 0 {
		out = append(out, `,"warnings":[`...)
		for i, w := range resp.Warnings {
			if i > 0 {
				out = append(out, ',')
			}
			out = strconv.AppendQuote(out, w)
		}
		out = append(out, ']')
	}
	return append(out, "}}"...), true
}

// asIs says whether encoding/json writes s between quotes as it is, as
// strconv.AppendQuote does: printable ASCII, without the quote, the
// backslash, or the characters encoding/json escapes for HTML.
func asIs(s string) bool {
	for i := 0; i < len(s); i++ {
		switch b := s[i]; {
		case b < 0x20 || b >= 0x7f, b == '"', b == '\\', b == '<', b == '>', b == '&':
			return false
		}
	}
	return true
}
