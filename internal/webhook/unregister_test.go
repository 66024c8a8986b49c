package webhook_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/job-signal/job-signal/internal/webhook"
)

// TestUnregisterUsage: unregister is a command of its own beside serving
// (the default), and a wrong command line is a usage error naming the
// flag, before any API call. What it does to a real API server, e2e's
// TestChartUpgradeUninstall shows: helm uninstall runs it first.
func TestUnregisterUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"unregister"}, "--mutating-webhook-configuration"},
		{[]string{"unregister", "--mutating-webhook-configuration=x", "--settle=-1s"}, "--settle: must not be negative"},
		{[]string{"unregister", "--mutating-webhook-configuration=x", "--timeout=0s"}, "--timeout: must be positive"},
		{[]string{"--listen=127.0.0.1:0"}, "--tls-cert-file"}, // serving stays the default command
	} {
		var stdout, stderr bytes.Buffer
		if code := webhook.Main(tc.args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%q: exit %d, %q; want 2, naming %s", tc.args, code, stderr.String(), tc.want)
		}
	}
}
