package webhook

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"

	admissionv1 "k8s.io/api/admission/v1"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	kjson "sigs.k8s.io/json"

	"github.com/job-signal/job-signal/inject"
)

// isJob says whether a request is for a batch/v1 Job's creation: the
// configuration's Job webhooks send those whose podFailurePolicy judges
// exit codes.
func isJob(req *admissionv1.AdmissionRequest) bool {
	return req.Kind.Group == "batch" && req.Kind.Version == "v1" && req.Kind.Kind == "Job" && req.Operation == admissionv1.Create
}

// reviewJob answers a Job's creation: its Pod template is given the
// annotation job-signal.dev/exit-code-rules, which containers the Job's
// podFailurePolicy judges by exit code (inject.ExitCodeRulesOf), so that
// the form chosen for its Pods, whose admission does not see the Job,
// never changes what the Job controller decides. A Job is never refused:
// whatever goes wrong, it is admitted as it is, and its Pods' form is then
// chosen without knowing its policy (as when this call fails, with the
// configuration's failurePolicy Ignore).
func (c *Config) reviewJob(req *admissionv1.AdmissionRequest) (resp *admissionv1.AdmissionResponse, o outcome, class string) {
	resp = &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	log := c.Log.With("uid", string(req.UID), "namespace", req.Namespace, "job", req.Name)
	defer func() {
		if p := recover(); p != nil {
			log.Error("panic while reviewing a Job: admitted as it is", "panic", p, "stack", string(debug.Stack()))
			resp, o, class = &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}, skipped, reasonInternal
		}
	}()
	ops, rules, err := exitCodeRuleOps(req.Object.Raw)
	switch {
	case errors.Is(err, errNoRules):
		log.Debug("the Job's podFailurePolicy judges no exit code: nothing to record")
		return resp, unchanged, reasonNoExitCodeRules
	case err != nil:
		log.Warn("Job admitted without its exit-code rules recorded: its Pods' form is chosen without them", "class", string(reasonUnreadable), "reason", oneLine(err.Error(), maxReason))
		return resp, skipped, reasonUnreadable
	case len(ops) == 0:
		log.Debug("the Job's template records its exit-code rules already", "rules", rules)
		return resp, unchanged, reasonRecordedAlready
	}
	if err := setPatch(resp, ops); err != nil {
		log.Error("the patch could not be written", "err", err)
	}
	if resp.Patch == nil {
		return resp, skipped, reasonInternal
	}
	log.Info("recorded in the Job's Pod template which containers its podFailurePolicy judges by exit code", "rules", oneLine(rules, maxReason))
	return resp, recorded, reasonNone
}

// errNoRules: the Job's podFailurePolicy has no rule on exit codes.
var errNoRules = errors.New("no exit-code rules")

// exitCodeRuleOps is the patch that sets the annotation
// job-signal.dev/exit-code-rules on raw's Pod template to the value
// inject.ExitCodeRulesOf gives its podFailurePolicy (none when it is set
// so already; errNoRules when the policy judges no exit code), read back
// as the API server reads a patched Job before it is handed over.
func exitCodeRuleOps(raw []byte) (ops []inject.Op, rules string, err error) {
	var job struct {
		Spec struct {
			PodFailurePolicy *batchv1.PodFailurePolicy `json:"podFailurePolicy"`
			Template         json.RawMessage           `json:"template"`
		} `json:"spec"`
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, &job); err != nil {
		return nil, "", fmt.Errorf("cannot read the Job: %w", err)
	}
	if rules = inject.ExitCodeRulesOf(job.Spec.PodFailurePolicy); rules == "" {
		return nil, "", errNoRules
	}
	var template struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if len(job.Spec.Template) == 0 || string(job.Spec.Template) == "null" {
		return nil, rules, errors.New("the Job has no spec.template")
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(job.Spec.Template, &template); err != nil {
		return nil, rules, fmt.Errorf("cannot read the Job's spec.template: %w", err)
	}
	annotations := template.Metadata.Annotations // nil without metadata
	if v, ok := annotations[inject.AnnotationExitCodeRules]; ok && v == rules {
		return nil, rules, nil
	}
	if annotationsSize(annotations)+len(inject.AnnotationExitCodeRules)+len(rules) > totalAnnotationLimit {
		return nil, rules, fmt.Errorf("the Pod template's annotations are at the API server's limit (%d bytes): no room for %s", totalAnnotationLimit, inject.AnnotationExitCodeRules)
	}
	for _, op := range inject.AnnotateOps(job.Spec.Template, inject.AnnotationExitCodeRules, rules) {
		op.Path = "/spec/template" + op.Path
		ops = append(ops, op)
	}
	if err := readBackJob(raw, ops, rules); err != nil {
		return nil, rules, err
	}
	return ops, rules, nil
}

// readBackJob applies ops to raw as the API server applies a webhook's
// JSON Patch, decodes both as a Job, and fails unless the patched one is
// raw's with the annotation set to rules (added, or a stale value
// replaced) and nothing else changed (by Semantic equality, to which an
// annotations map left empty is the same as none).
func readBackJob(raw []byte, ops []inject.Op, rules string) error {
	patched, err := inject.Apply(raw, ops)
	if err != nil {
		return fmt.Errorf("the exit-code rules' patch does not apply to the Job: %w", err)
	}
	var before, after batchv1.Job
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, &before); err != nil {
		return fmt.Errorf("cannot read the Job: %w", err)
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(patched, &after); err != nil {
		return fmt.Errorf("the Job patched with its exit-code rules cannot be read: %w", err)
	}
	got, ok := after.Spec.Template.Annotations[inject.AnnotationExitCodeRules]
	if !ok || got != rules {
		return fmt.Errorf("the Job patched with its exit-code rules reads %q, not %q", got, rules)
	}
	delete(after.Spec.Template.Annotations, inject.AnnotationExitCodeRules)
	delete(before.Spec.Template.Annotations, inject.AnnotationExitCodeRules) // a stale value, replaced
	if !equality.Semantic.DeepEqual(before, after) {
		return errors.New("the exit-code rules' patch changes more of the Job than the annotation")
	}
	return nil
}
