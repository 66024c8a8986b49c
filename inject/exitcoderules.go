package inject

import (
	"fmt"
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

// judged is which containers a Job's podFailurePolicy judges by exit code.
type judged struct {
	all   bool
	names []string
}

func (j judged) judges(name string) bool { return j.all || slices.Contains(j.names, name) }

// parseExitCodeRules reads a value of AnnotationExitCodeRules (or
// Target.ExitCodeRules): "" for none, "*", or container names.
func parseExitCodeRules(value string) (judged, error) {
	if strings.TrimSpace(value) == "*" {
		return judged{all: true}, nil
	}
	list, err := names(value)
	if err != nil {
		return judged{}, fmt.Errorf(`want "*" or container names separated by commas: %w`, err)
	}
	return judged{names: list}, nil
}

// exitCodeRules is the one reading of which containers the Job judges by
// exit code, from both ways the fact arrives: the caller's Target (the
// plugin reads the Job) and the template's annotation (the webhook writes
// it at the Job's creation). Either naming a container is enough.
func exitCodeRules(target string, annotation judged) (judged, error) {
	j, err := parseExitCodeRules(target)
	if err != nil {
		return judged{}, fmt.Errorf("inject: Target.ExitCodeRules %q: %w", target, err)
	}
	j.all = j.all || annotation.all
	for _, n := range annotation.names {
		if !slices.Contains(j.names, n) {
			j.names = append(j.names, n)
		}
	}
	return j, nil
}
