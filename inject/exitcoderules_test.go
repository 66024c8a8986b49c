package inject

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"
)

func TestExitCodeRulesOf(t *testing.T) {
	codes := func(container *string) batchv1.PodFailurePolicyRule {
		return batchv1.PodFailurePolicyRule{Action: batchv1.PodFailurePolicyActionIgnore,
			OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{ContainerName: container, Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{143}}}
	}
	conditions := batchv1.PodFailurePolicyRule{Action: batchv1.PodFailurePolicyActionIgnore,
		OnPodConditions: []batchv1.PodFailurePolicyOnPodConditionsPattern{{Type: "DisruptionTarget"}}}
	for _, c := range []struct {
		name   string
		policy *batchv1.PodFailurePolicy
		want   string
	}{
		{"no policy", nil, ""},
		{"conditions only", &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{conditions}}, ""},
		{"no container named", &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{codes(ptr.To("main")), codes(nil)}}, "*"},
		{"empty name", &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{codes(ptr.To(""))}}, "*"},
		{"named, sorted, once", &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{codes(ptr.To("proxy")), conditions, codes(ptr.To("main")), codes(ptr.To("proxy"))}}, "main,proxy"},
	} {
		if got := ExitCodeRulesOf(c.policy); got != c.want {
			t.Errorf("%s: ExitCodeRulesOf = %q, want %q", c.name, got, c.want)
		}
	}
}
