package webhook

import (
	"errors"

	corev1 "k8s.io/api/core/v1"

	"github.com/job-signal/job-signal/inject"
)

// outcome is what the webhook did with a Pod.
type outcome string

const (
	injected  outcome = "injected"
	skipped   outcome = "skipped"   // admitted without job-signal, the reason recorded
	denied    outcome = "denied"    // refused for now: the Job controller creates it again
	unchanged outcome = "unchanged" // not the webhook's to inject
	recorded  outcome = "recorded"  // a Job: its exit-code rules written into its Pod template
)

// Reason classes: the metrics' label, a bounded set.
const (
	reasonNone          = "none"
	reasonNotSelected   = "not_selected"    // not a Job's Pod, nor labelled enabled
	reasonOptedOut      = "opted_out"       // labelled disabled
	reasonHandWired     = "hand_wired"      // job-signal added by hand
	reasonNothingToDo   = "nothing_to_do"   // one container: it ends by itself
	reasonNotPod        = "not_pod"         // another kind or operation
	reasonUnreadable    = "unreadable"      // not a Pod this webhook can read
	reasonRefused       = "refused"         // a shape inject refuses: the field is named
	reasonLimitRange    = "limitrange"      // the namespace's LimitRange leaves no room
	reasonAnnotations   = "annotations"     // the record would not fit the API server's limit
	reasonImage         = "image"           // the registry's lasting answer: refused, unknown, too large, invalid
	reasonRegistry      = "registry"        // the registry unavailable for now
	reasonAPI           = "api"             // the API server unavailable for now
	reasonBusy          = "busy"            // too many requests at once
	reasonRequestTooBig = "request_size"    // an AdmissionReview over maxBody
	reasonSlowRequest   = "request_timeout" // an AdmissionReview not whole within BodyTimeout
	reasonInternal      = "internal"        // a bug: a panic while reviewing
	reasonNotNative     = "not_native"      // mode native, and the Pod's sidecars do not map onto native sidecars
	// A Job's review (jobs.go): its podFailurePolicy judges no exit code,
	// or its template says so already.
	reasonNoExitCodeRules = "no_exit_code_rules"
	reasonRecordedAlready = "recorded_already"
)

// failureClass is one kind of failure, with whether it may pass: one row of policyTable.
type failureClass struct {
	Reason    string // the reason class: the metrics' label
	Temporary bool   // trying again soon may well succeed
	Cause     string // what happened, for the README's table
}

// policyTable is the one table of the failures that keep the webhook from
// injecting a Pod: each class is temporary or lasting, and verdict turns
// that into denying the Pod for now or admitting it without job-signal.
// Every path reads it (fail); README's policy table is checked against it.
var policyTable = []failureClass{
	{reasonRegistry, true, "a registry does not answer within `--registry-timeout` (5 s), cannot be reached, or answers 429 or 5xx"},
	{reasonAPI, true, "the API server does not answer when asked for a pull secret or the namespace's LimitRanges"},
	{reasonBusy, true, "more than `--max-in-flight` (64) requests at once, or a large request whose bytes find no room within 2 s in the 5 MiB of bodies the webhook holds at once"},
	{reasonSlowRequest, true, "the AdmissionReview did not arrive whole within 2 s of its headers (the API server sends it in one write)"},
	{reasonInternal, true, "a bug: the webhook panicked while reviewing the Pod"},
	{reasonRefused, false, "a shape inject refuses (the field is named), a Windows Pod, pod-level requests below what the containers need"},
	{reasonNotNative, false, "`--mode native`, and a sidecar needs what native sidecars lack (the reason names it): use mode auto for the pair there"},
	{reasonLimitRange, false, "a LimitRange of the namespace leaves the install container no room"},
	{reasonAnnotations, false, "with the record, the Pod's annotations would exceed the API server's 256 KiB"},
	{reasonImage, false, "the registry refuses the image (401/403), does not know it (404), or serves it over a bound or against its digest; a pull secret that is not one"},
	{reasonUnreadable, false, "the request's object cannot be read as a Pod"},
	{reasonRequestTooBig, false, "an AdmissionReview over 4 MiB (the API server sends at most 3)"},
}

// failure is why a Pod could not be injected.
type failure struct {
	class string // a reason class of Policy
	err   error
}

func (f *failure) Error() string { return f.err.Error() }
func (f *failure) Unwrap() error { return f.err }

// temporary is policyTable's answer for f's class; a class not in it is
// lasting (TestPolicyCoversEveryFailure keeps them all in it).
func (f *failure) temporary() bool {
	for _, c := range policyTable {
		if c.Reason == f.class {
			return c.Temporary
		}
	}
	return false
}

// fail classes err, unless it is a failure already.
func fail(class string, err error) error {
	var f *failure
	if errors.As(err, &f) {
		return err
	}
	return &failure{class: class, err: err}
}

// failureOf is err as a failure; an unclassed error is a lasting refusal.
func failureOf(err error) *failure {
	var f *failure
	if errors.As(err, &f) {
		return f
	}
	return &failure{class: reasonRefused, err: err}
}

// Failure policies, as in a webhook configuration.
const (
	PolicyFail   = "Fail"
	PolicyIgnore = "Ignore"
)

// verdict decides what happens to a Pod the webhook could not inject.
//
// A Pod that needs job-signal (more than one container: without it the
// sidecars would keep it running after the job) is not admitted without
// it because of a failure that may pass (a registry or API server
// unavailable, the webhook busy, a bug): it is denied, the Job controller
// creates it again with backoff, and the reason shows in the Job's
// events. This is failurePolicy Fail carried into the webhook's own
// answers, so that an outage of the webhook and an outage behind it end
// alike. With policy Ignore (availability first), and for a lasting
// refusal (a shape inject refuses, an image the registry will not give),
// where trying again would only hold the Job up for ever, the Pod is
// admitted without job-signal and the reason recorded. A Pod that
// completes anyway (one container) is never held up.
func verdict(needsJobSignal, transient bool, policy string) outcome {
	if needsJobSignal && transient && policy != PolicyIgnore {
		return denied
	}
	return skipped
}

// needsJobSignal: a Pod with more than one container does not end by
// itself when its job does, unless Kubernetes restarts it for ever
// (restartPolicy Always), which job-signal cannot change.
func needsJobSignal(pod *corev1.Pod) bool {
	return len(pod.Spec.Containers) > 1 && pod.Spec.RestartPolicy != corev1.RestartPolicyAlways
}

// maxReason bounds a reason written into an object (annotation, warning,
// the message of a denial): the bound the plugin's messages share.
const maxReason = inject.MaxReason

// oneLine is inject.OneLine, the one rule for a message from outside.
func oneLine(s string, max int) string { return inject.OneLine(s, max) }

// totalAnnotationLimit and annotationsSize are inject's, the one rule for
// the API server's bound on a Pod's annotations.
const totalAnnotationLimit = inject.TotalAnnotationLimit

func annotationsSize(annotations map[string]string) int { return inject.AnnotationsSize(annotations) }
