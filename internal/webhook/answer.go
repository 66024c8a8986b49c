package webhook

import (
	"encoding/base64"
	"slices"
	"strconv"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/job-signal/job-signal/inject"
)

// appendReview appends the review answering with resp as json.Marshal
// writes it, byte for byte, when resp is the common answer: no status and
// no audit annotations; its strings are written as json.Marshal writes
// them (inject.AppendString). ok is false for any other, which
// json.Marshal then writes: reflecting over the review was a few percent
// of the webhook's CPU per Pod, most of it for an answer of four members.
func appendReview(out []byte, meta metav1.TypeMeta, resp *admissionv1.AdmissionResponse) (_ []byte, ok bool) {
	if resp == nil || resp.Result != nil || len(resp.AuditAnnotations) > 0 {
		return nil, false
	}
	size := 128 + len(meta.Kind) + len(meta.APIVersion) + len(resp.UID) + base64.StdEncoding.EncodedLen(len(resp.Patch))
	for _, w := range resp.Warnings {
		size += len(w) + 3
	}
	out = append(out, '{')
	out = slices.Grow(out, size)
	if meta.Kind != "" {
		out = inject.AppendString(append(out, `"kind":`...), meta.Kind)
		out = append(out, ',')
	}
	if meta.APIVersion != "" {
		out = inject.AppendString(append(out, `"apiVersion":`...), meta.APIVersion)
		out = append(out, ',')
	}
	out = inject.AppendString(append(out, `"response":{"uid":`...), string(resp.UID))
	out = strconv.AppendBool(append(out, `,"allowed":`...), resp.Allowed)
	if len(resp.Patch) > 0 { // omitempty
		out = append(out, `,"patch":"`...)
		out = base64.StdEncoding.AppendEncode(out, resp.Patch)
		out = append(out, '"')
	}
	if resp.PatchType != nil {
		out = inject.AppendString(append(out, `,"patchType":`...), string(*resp.PatchType))
	}
	if len(resp.Warnings) > 0 {
		out = append(out, `,"warnings":[`...)
		for i, w := range resp.Warnings {
			if i > 0 {
				out = append(out, ',')
			}
			out = inject.AppendString(out, w)
		}
		out = append(out, ']')
	}
	return append(out, "}}"...), true
}
