//go:build e2e

package registry

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/job-signal/job-signal/internal/kubectl"
	"github.com/job-signal/job-signal/internal/resolve"
)

// TestInject1000 times `kubectl job-signal inject` on a file of 1,000
// Jobs: with every command given (offline), and with the main container's
// command to look up (one image for all, looked up once).
func TestInject1000(t *testing.T) {
	reg := Start(t, "", "")
	ref := reg.Host + "/jobs/app:1"
	Push(t, ref, Image(t, []string{"/app"}, []string{"--all"}), authn.Anonymous)
	file := func(args bool) string {
		var b strings.Builder
		for i := range 1000 {
			main := fmt.Sprintf(`{name: app, image: busybox:1.37, command: ["/app", "--part=%d"]}`, i)
			if args {
				main = fmt.Sprintf(`{name: app, image: %s, args: ["--part=%d"]}`, ref, i)
			}
			fmt.Fprintf(&b, `---
# job %d
apiVersion: batch/v1
kind: Job
metadata:
  name: export-%d
spec:
  template:
    metadata:
      annotations: {job-signal.dev/ready-tcp.proxy: "127.0.0.1:5432"}
    spec:
      restartPolicy: Never
      containers:
      - %s
      - name: proxy
        image: busybox:1.37
        command: [/proxy, --port=5432]
`, i, i, main)
		}
		return b.String()
	}
	for _, tc := range []struct {
		label string
		input string
		opts  kubectl.Options
	}{
		{"offline", file(false), kubectl.Options{Offline: true}},
		{"registry", file(true), kubectl.Options{Resolver: resolve.New(nil, 16), Keychain: authn.DefaultKeychain, Timeout: 30 * time.Second}},
	} {
		var out bytes.Buffer
		start := time.Now()
		if err := kubectl.Run(context.Background(), strings.NewReader(tc.input), &out, io.Discard, &tc.opts); err != nil {
			t.Fatal(err)
		}
		elapsed := time.Since(start)
		if n := strings.Count(out.String(), "name: job-signal-install"); n != 1000 {
			t.Fatalf("%s: %d Pod templates injected, want 1000", tc.label, n)
		}
		t.Logf("E2E_TIMING inject_1000_documents_%s seconds=%.3f (input %d KiB, output %d KiB)", tc.label, elapsed.Seconds(), len(tc.input)>>10, out.Len()>>10)
	}
}
