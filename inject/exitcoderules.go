package inject

import (
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
)

// AnnotationExitCodeRules on a Pod template says which containers the
// Job's podFailurePolicy judges by their exit codes: "*" when a rule with
// onExitCodes names no container (the Job controller then matches it
// against every container, init containers and native sidecars among
// them), else the names its rules give, comma-separated. The webhook
// writes it on a Job's template when the Job is created, since a Pod's
// admission does not see its Job; the plugin reads the Job itself.
const AnnotationExitCodeRules = Prefix + "exit-code-rules"

// ExitCodeRulesOf is the value of AnnotationExitCodeRules for a Job's
// podFailurePolicy: "" when no rule reads an exit code.
func ExitCodeRulesOf(policy *batchv1.PodFailurePolicy) string {
	if policy == nil {
		return ""
	}
	var names []string
	for _, r := range policy.Rules {
		switch {
		case r.OnExitCodes == nil:
		case r.OnExitCodes.ContainerName == nil || *r.OnExitCodes.ContainerName == "":
			return "*"
		default:
			names = append(names, *r.OnExitCodes.ContainerName)
		}
	}
	slices.Sort(names)
	return strings.Join(slices.Compact(names), ",")
}
