package webhook

import (
	"testing"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/version"
)

// injectOps is inject's ops for the Pod raw, every command given (no
// lookup), as the webhook plans them before its own checks.
func injectOps(t *testing.T, raw []byte) []inject.Op {
	t.Helper()
	plan, err := inject.Prepare(raw)
	if err != nil {
		t.Fatal(err)
	}
	res, err := plan.Inject(nil, version.Image)
	if err != nil {
		t.Fatal(err)
	}
	return res.Ops
}
