package webhook

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/job-signal/job-signal/inject"
)

// LimitRangeLister lists a namespace's LimitRanges. Nil: the webhook has
// no API access, and LimitRanges are not checked.
type LimitRangeLister func(namespace string) ([]corev1.LimitRange, error)

// fitOps fits the install init container that ops add into the
// namespace's LimitRanges, by the rule the plugin shares
// (inject.FitLimitRanges).
func fitOps(raw []byte, before *corev1.Pod, ops []inject.Op, ranges []corev1.LimitRange) ([]inject.Op, error) {
	return inject.FitLimitRanges(raw, before, ops, ranges)
}
