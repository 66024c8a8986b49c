package webhook

import admissionv1 "k8s.io/api/admission/v1"

// WithoutManagedFields is withoutManagedFields for the benchmarks of
// package webhook_test, which reach webhooktest (it imports webhook).
var WithoutManagedFields = withoutManagedFields

// DecodeReview is decodeReview: the review, and the Pod decoded beside it
// (nil when it was not).
func DecodeReview(body []byte) (admissionv1.AdmissionReview, map[string]any, error) {
	r, err := decodeReview(body)
	return r.AdmissionReview, r.pod.Object, err
}

// ScannedFast says whether decodeReview reads body the fast way.
func ScannedFast(body []byte) bool {
	_, ok := scanReview(body)
	return ok
}
