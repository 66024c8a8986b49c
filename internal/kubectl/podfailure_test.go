package kubectl

import (
	"errors"
	"strings"
	"testing"

	"github.com/job-signal/job-signal/inject"
)

// TestPodFailurePolicy: the plugin reads the podFailurePolicy of the Job
// (and of a CronJob's jobTemplate) it injects, and gives inject that
// fact: a rule that judges a sidecar's exit code keeps the pair in auto
// and is refused in mode native, naming the change; rules on main alone
// keep native sidecars.
func TestPodFailurePolicy(t *testing.T) {
	auto := inject.Target{Mode: inject.ModeAuto, Cluster: native137.Cluster}
	job := func(policy string) string {
		return "apiVersion: batch/v1\nkind: Job\nmetadata: {name: export}\nspec:\n" + policy +
			"  template:\n    spec:\n      restartPolicy: Never\n      containers:\n" +
			"      - {name: export, image: registry.example/export:1, command: [/export]}\n" +
			"      - {name: cloud-sql-proxy, image: gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14.1, command: [/cloud-sql-proxy, --port=5432, p:r:i]}\n"
	}
	cronJob := "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly}\nspec:\n  schedule: '0 3 * * *'\n  jobTemplate:\n    spec:\n" +
		"      podFailurePolicy:\n        rules:\n        - {action: Ignore, onExitCodes: {containerName: cloud-sql-proxy, operator: In, values: [143]}}\n" +
		"      template:\n        spec:\n          restartPolicy: Never\n          containers:\n" +
		"          - {name: export, image: registry.example/export:1, command: [/export]}\n" +
		"          - {name: cloud-sql-proxy, image: gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14.1, command: [/cloud-sql-proxy, p:r:i]}\n"
	anyContainer := "  podFailurePolicy:\n    rules:\n    - action: Ignore\n      onExitCodes: {operator: In, values: [143]}\n"
	onMain := "  podFailurePolicy:\n    rules:\n    - action: FailJob\n      onExitCodes: {containerName: export, operator: In, values: [42]}\n    - action: Ignore\n      onPodConditions: [{type: DisruptionTarget}]\n"
	for _, tc := range []struct {
		name, input string
		form        inject.Form // in auto; "" when it is refused
		reason      string      // a part of auto's note
		refusal     string      // a part of mode native's error
	}{
		{"a rule without containerName", job(anyContainer), inject.FormPair,
			`pair: the Job's podFailurePolicy judges sidecar "cloud-sql-proxy"'s exit code (a rule without containerName)`,
			"give every onExitCodes rule of the Job's podFailurePolicy the main container's containerName"},
		{"a CronJob's rule naming the sidecar", cronJob, inject.FormPair,
			`pair: the Job's podFailurePolicy judges sidecar "cloud-sql-proxy"'s exit code, which native sidecars change`,
			`take sidecar "cloud-sql-proxy" out of the onExitCodes rules`},
		{"rules on main and conditions only", job(onMain), inject.FormNative, "native: every sidecar maps", ""},
		{"no policy", job(""), inject.FormNative, "native: every sidecar maps", ""},
		{"a policy that is none", job("  podFailurePolicy: {rules: yes}\n"), "", "", "spec.podFailurePolicy is not a podFailurePolicy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, err := runFor(t, tc.input, auto)
			if tc.form == "" {
				if err == nil || !strings.Contains(err.Error(), tc.refusal) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("got %v, want one line with %q", err, tc.refusal)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			native := strings.Contains(out, "restartPolicy: Always")
			if native != (tc.form == inject.FormNative) || !strings.Contains(stderr, tc.reason) {
				t.Errorf("native %v, stderr %q: want %s with %q", native, stderr, tc.form, tc.reason)
			}
			_, _, err = runFor(t, tc.input, native137)
			switch {
			case tc.refusal == "" && err != nil:
				t.Errorf("mode native: %v", err)
			case tc.refusal != "" && (!errors.Is(err, inject.ErrNotNative) || !strings.Contains(err.Error(), tc.refusal)):
				t.Errorf("mode native: %v, want a refusal naming %q", err, tc.refusal)
			}
		})
	}
}
