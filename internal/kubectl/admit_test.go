package kubectl

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/job-signal/job-signal/internal/testing/hostileregistry"
)

// jobWith is a Job whose template has these containers (YAML flow
// mappings, one a line) and template annotations (a flow mapping, or "").
func jobWith(annotations string, containers ...string) string {
	doc := "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n"
	if annotations != "" {
		doc += "    metadata: {annotations: " + annotations + "}\n"
	}
	doc += "    spec:\n      restartPolicy: Never\n      containers:\n"
	for _, c := range containers {
		doc += "      - " + c + "\n"
	}
	return doc
}

// TestRegistryErrorIsOneLine: a registry that answers with a proxy's huge
// HTML error page does not put that page into the plugin's error: what
// comes from outside is one bounded line (as the webhook's reasons are).
func TestRegistryErrorIsOneLine(t *testing.T) {
	reg := hostileregistry.Start(t)
	in := jobWith("", "{name: app, image: "+reg.Image(hostileregistry.HugeErrorText)+"}", "{name: proxy, image: cloud-sql-proxy, command: [/proxy]}")
	var out, stderr bytes.Buffer
	code := Main(context.Background(), []string{"inject", "--registry-timeout", "30s", "-f", "-"}, strings.NewReader(in), &out, &stderr)
	if code != 1 || out.Len() > 0 {
		t.Fatalf("exit %d, %d bytes out, stderr %q", code, out.Len(), stderr.String())
	}
	msg := strings.TrimSuffix(stderr.String(), "\n")
	if strings.Contains(msg, "\n") || len(msg) > 1536 {
		t.Errorf("%d bytes, %d lines on stderr:\n%.2000s", len(msg), strings.Count(msg, "\n")+1, msg)
	}
	for _, want := range []string{`container "app"`, "ENTRYPOINT could not be looked up"} {
		if !strings.Contains(msg, want) {
			t.Errorf("stderr lacks %q: %.2000s", want, msg)
		}
	}
}

// TestAnnotationsOverTheLimit: a template whose annotations job-signal's
// record would take over the API server's 256 KiB is refused, by the
// webhook's rule, rather than written for kubectl apply to fail on; one
// that fits with the record is injected.
func TestAnnotationsOverTheLimit(t *testing.T) {
	containers := []string{"{name: app, image: i, command: [/app]}", "{name: proxy, image: cloud-sql-proxy, command: [/proxy]}"}
	big := func(n int) string { return "{example.com/big: " + strings.Repeat("x", n) + "}" }
	_, _, err := run(t, jobWith(big(256<<10-len("example.com/big")-200), containers...), true)
	if err == nil || !strings.Contains(err.Error(), "over the API server's limit of 262144") || !strings.Contains(err.Error(), "Job j, spec.template") {
		t.Errorf("error %v", err)
	}
	out, _, err := run(t, jobWith(big(200<<10), containers...), true)
	if err != nil || !strings.Contains(out, "job-signal.dev/injected") {
		t.Errorf("error %v", err)
	}
}
