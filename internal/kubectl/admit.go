package kubectl

import (
	corev1 "k8s.io/api/core/v1"
	kjson "sigs.k8s.io/json"

	"github.com/job-signal/job-signal/inject"
)

// admit checks what inject's changes make of a template against what the
// API server checks when the Pod is created, by the webhook's rules
// (shared in inject): the total size of its annotations. A template that
// would be refused is an error naming the bound, rather than output that
// kubectl apply fails on.
func admit(p *pod) error {
	if len(p.ops) == 0 {
		return nil
	}
	var before corev1.Pod
	if err := kjson.UnmarshalCaseSensitivePreserveInts(p.json, &before); err != nil { // as the API server reads it
		return err
	}
	return inject.CheckAnnotations(before.Annotations, p.ops)
}
