package webhook

import (
	corev1 "k8s.io/api/core/v1"
	kjson "sigs.k8s.io/json"

	"github.com/job-signal/job-signal/inject"
)

// LimitRangeLister lists a namespace's LimitRanges. Nil: the webhook has
// no API access, and LimitRanges are not checked.
type LimitRangeLister func(namespace string) ([]corev1.LimitRange, error)

// fitOps fits the install init container that ops add into the
// namespace's LimitRanges, by the rule the plugin shares
// (inject.FitLimitRanges). It reads the Pod whole, as the API server does,
// only when there are LimitRanges: readPod leaves out the resources.
func fitOps(raw []byte, ops []inject.Op, ranges []corev1.LimitRange) ([]inject.Op, error) {
	if len(ranges) == 0 {
		return ops, nil
	}
	before := &corev1.Pod{}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, before); err != nil {
		return nil, err
	}
	return inject.FitLimitRanges(raw, before, ops, ranges)
}
