package webhook

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "sigs.k8s.io/json"

	"github.com/job-signal/job-signal/inject"
)

// TestExitCodeRuleOps: a Job whose podFailurePolicy judges exit codes gets
// the annotation in its Pod template, whatever shape the template's
// metadata has (absent, without annotations, annotations null, with
// others, with a stale value); the patch, applied and read back as the
// API server does, changes nothing else. A Job whose policy judges none,
// or whose template says so already, gets no patch; one the API server
// would refuse with it (annotations at the limit) neither.
func TestExitCodeRuleOps(t *testing.T) {
	exitCodes := `"podFailurePolicy":{"rules":[{"action":"Ignore","onExitCodes":{"operator":"In","values":[143]}}]}`
	named := `"podFailurePolicy":{"rules":[{"action":"FailJob","onExitCodes":{"containerName":"main","operator":"In","values":[42]}},` +
		`{"action":"Ignore","onPodConditions":[{"type":"DisruptionTarget"}]},{"action":"Count","onExitCodes":{"containerName":"proxy","operator":"NotIn","values":[0]}}]}`
	onlyConditions := `"podFailurePolicy":{"rules":[{"action":"Ignore","onPodConditions":[{"type":"DisruptionTarget"}]}]}`
	spec := `"containers":[{"name":"main","image":"x"}],"restartPolicy":"Never"`
	job := func(policy, metadata string) string {
		t := `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"export","namespace":"batch"},"spec":{` + policy
		if policy != "" {
			t += ","
		}
		t += `"backoffLimit":3,"template":{`
		if metadata != "" {
			t += `"metadata":` + metadata + ","
		}
		return t + `"spec":{` + spec + `}}}}`
	}
	big := strings.Repeat("x", totalAnnotationLimit)
	for _, tc := range []struct {
		name, job string
		want      string // the annotation's value after the patch; "" for no patch
		wantErr   string
	}{
		{"an exit code without containerName", job(exitCodes, ""), "*", ""},
		{"rules naming containers", job(named, `{"labels":{"app":"export"}}`), "main,proxy", ""},
		{"annotations null", job(exitCodes, `{"annotations":null}`), "*", ""},
		{"other annotations", job(exitCodes, `{"annotations":{"a/b":"c","job-signal.dev/main":"main"}}`), "*", ""},
		{"a stale value", job(exitCodes, `{"annotations":{"job-signal.dev/exit-code-rules":"main"}}`), "*", ""},
		{"recorded already", job(exitCodes, `{"annotations":{"job-signal.dev/exit-code-rules":"*"}}`), "", ""},
		{"no exit-code rule", job(onlyConditions, ""), "", "no exit-code rules"},
		{"no policy", job("", ""), "", "no exit-code rules"},
		{"annotations at the limit", job(exitCodes, `{"annotations":{"big":"`+big+`"}}`), "", "limit"},
		{"not a Job", `{"spec":[]}`, "", "cannot read the Job"},
		{"template null", `{"spec":{` + exitCodes + `,"template":null}}`, "", "no spec.template"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ops, _, err := exitCodeRuleOps([]byte(tc.job))
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
			}
			if tc.want == "" {
				if len(ops) != 0 {
					t.Errorf("a patch %+v, want none", ops)
				}
				return
			}
			patched, err := inject.Apply([]byte(tc.job), ops)
			if err != nil {
				t.Fatal(err)
			}
			var got batchv1.Job
			if err := kjson.UnmarshalCaseSensitivePreserveInts(patched, &got); err != nil {
				t.Fatal(err)
			}
			if v := got.Spec.Template.Annotations[inject.AnnotationExitCodeRules]; v != tc.want {
				t.Errorf("the template's %s is %q, want %q", inject.AnnotationExitCodeRules, v, tc.want)
			}
		})
	}
}

// TestReviewJob: a Job's admission through Review is always allowed; a
// Job whose policy judges exit codes gets its patch, and each answer is
// counted by outcome and class.
func TestReviewJob(t *testing.T) {
	c := &Config{}
	review := func(raw string) *admissionv1.AdmissionResponse {
		t.Helper()
		return c.Review(context.Background(), &admissionv1.AdmissionRequest{UID: "u", Namespace: "batch", Name: "export",
			Kind:      metav1.GroupVersionKind{Group: "batch", Version: "v1", Kind: "Job"},
			Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: []byte(raw)}})
	}
	resp := review(`{"spec":{"podFailurePolicy":{"rules":[{"action":"Ignore","onExitCodes":{"operator":"In","values":[143]}}]},"template":{"spec":{"containers":[]}}}}`)
	var patch []map[string]any
	if !resp.Allowed || json.Unmarshal(resp.Patch, &patch) != nil || len(patch) != 1 || patch[0]["path"] != "/spec/template/metadata" {
		t.Errorf("allowed %v, patch %s; want the template's metadata added", resp.Allowed, resp.Patch)
	}
	for _, raw := range []string{`{"spec":{"template":{}}}`, `not json`} {
		if resp := review(raw); !resp.Allowed || resp.Patch != nil {
			t.Errorf("%s: allowed %v, patch %s; want admitted as it is", raw, resp.Allowed, resp.Patch)
		}
	}
	wantMetrics(t, c, `job_signal_webhook_admissions_total{outcome="recorded",reason="none"} 1`,
		`job_signal_webhook_admissions_total{outcome="unchanged",reason="no_exit_code_rules"} 1`,
		`job_signal_webhook_admissions_total{outcome="skipped",reason="unreadable"} 1`)
}
