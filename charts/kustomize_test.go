package charts_test

import (
	"path/filepath"
	"testing"

	"github.com/job-signal/job-signal/internal/testing/chartrender"
)

// TestKustomize: the plain path, kubectl apply -k, builds as kustomize
// builds it (kustomize's own packages, internal/testing/chartrender), into the
// objects of the chart, held to the same checks; its outputs are goldens
// too. availability-first turns every Pod webhook, the webhook's own
// policy and the ValidatingAdmissionPolicy's to Ignore, and its bindings
// to warn (check holds them to the webhook's policy).
func TestKustomize(t *testing.T) {
	for _, tc := range []struct {
		dir, golden string
		secrets     []string
		policy      string
	}{
		{"../manifests/webhook", "kustomize-base.yaml", nil, "Fail"},
		{"../manifests/kustomize/webhook-example", "kustomize-example.yaml", []string{"batch"}, "Fail"},
		{"testdata/availability-first", "kustomize-availability-first.yaml", nil, "Ignore"},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			out, err := chartrender.Kustomize(tc.dir)
			if err != nil {
				t.Fatal(err)
			}
			compareGolden(t, filepath.Join("testdata", tc.golden), out)
			o := decode(t, out)
			check(t, o, tc.secrets)
			if len(o.podHooks) < 2 {
				t.Errorf("%d webhooks, want the chart's", len(o.config.Webhooks))
			}
			for _, w := range o.podHooks {
				if string(*w.FailurePolicy) != tc.policy {
					t.Errorf("%s: failurePolicy %s, want %s", w.Name, *w.FailurePolicy, tc.policy)
				}
				if w.ClientConfig.Service == nil {
					t.Errorf("%s: the patch lost its clientConfig", w.Name)
				}
			}
		})
	}
}
