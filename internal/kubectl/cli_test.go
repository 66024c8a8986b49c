package kubectl

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

const stream = `# a config map, formatted oddly, passes through byte for byte
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}   # flow style
data:
    key:   "value"
--- # the job
apiVersion: batch/v1
kind: Job
metadata:
  name: export
spec:
  template:
    metadata:
      annotations:
        job-signal.dev/main: export
    spec:
      restartPolicy: Never
      containers:
      - name: export
        image: busybox:1.37
        # the export itself
        command:
        - sh
        - -c
        - |
          echo exporting
          echo done
      - name: proxy
        image: busybox:1.37
        command: ["/proxy", "--port=5432"]  # the proxy
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - {name: web, image: nginx}
`

func TestStream(t *testing.T) {
	out, stderr, err := run(t, stream, true)
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(out, "\n---")
	if len(docs) != 3 || !strings.HasPrefix(stream, docs[0]+"\n---") || !strings.HasSuffix(stream, docs[2]) {
		t.Errorf("the ConfigMap and the Deployment are not byte for byte:\n%s", out)
	}
	for _, want := range []string{"# the export itself", "# the proxy", "- |\n          echo exporting", `args: ["/proxy", "--port=5432"]`, "--- # the job"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr, "document 3 (line 33), Deployment web: left unchanged") {
		t.Errorf("stderr %q: want a note on the Deployment", stderr)
	}
	again, _, err := run(t, out, true)
	if err != nil || again != out {
		t.Errorf("inject twice differs (%v):\n%s", err, again)
	}
	back, _, err := run(t, out, false)
	if want := stream; err != nil || back != want {
		t.Errorf("uninject(inject(x)) != x (%v):\n%s", err, back)
	}
}

// TestJSON: a kubectl get -o json List of a Job and a Pod comes back as
// JSON in the same indentation, and round trips.
func TestJSON(t *testing.T) {
	list := map[string]any{"apiVersion": "v1", "kind": "List", "items": []any{
		map[string]any{"apiVersion": "batch/v1", "kind": "CronJob", "metadata": map[string]any{"name": "c"}, "spec": map[string]any{"schedule": "@hourly",
			"jobTemplate": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"restartPolicy": "OnFailure",
				"containers": []any{map[string]any{"name": "job", "image": "busybox", "command": []any{"/job"}}}}}}}}},
		map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p", "annotations": map[string]any{"kubectl.kubernetes.io/default-container": "job"}}, "spec": map[string]any{"restartPolicy": "Never",
			"containers": []any{map[string]any{"name": "job", "image": "busybox", "command": []any{"/job"}}, map[string]any{"name": "side", "image": "busybox", "command": []any{"/side"}}}}},
	}}
	input, _ := json.MarshalIndent(list, "", "    ")
	out, _, err := run(t, string(input)+"\n", true)
	if err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		Items []struct {
			Kind string
		}
	}
	if err := json.Unmarshal([]byte(out), &parsed); err != nil || len(parsed.Items) != 2 {
		t.Fatalf("not JSON (%v):\n%s", err, out)
	}
	if !strings.Contains(out, "\n    \"items\": [") || !strings.Contains(out, "/var/run/job-signal-bin/sidecar-watch") || !strings.Contains(out, `"OnFailure"`) {
		t.Errorf("output:\n%s", out)
	}
	again, _, err := run(t, out, true)
	if err != nil || again != out {
		t.Errorf("inject twice differs (%v)", err)
	}
	back, _, err := run(t, out, false)
	if err != nil || back != string(input)+"\n" {
		t.Errorf("uninject(inject(x)) != x (%v):\n%s", err, back)
	}
}

// TestBadInput: each error names the document and the field, and nothing
// reaches stdout (run checks that).
func TestBadInput(t *testing.T) {
	job := func(containers string) string {
		return "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n" + containers
	}
	bomb := "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nx: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h"} {
		bomb += fmt.Sprintf("%s: &%s [*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s,*%s]\n", "x"+n, n, prev, prev, prev, prev, prev, prev, prev, prev, prev)
		prev = n
	}
	bomb += "spec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - {name: j, image: busybox, command: [/j], args: *h}\n"
	huge := "apiVersion: v1\nkind: ConfigMap\ndata:\n  big: " + strings.Repeat("x", 100<<20) + "\n"
	for _, tc := range []struct {
		name, input string
		want        []string
	}{
		{"malformed YAML", job("      - {name: a, image: b, command: [/a]}\n") + "---\nkind: Job\nspec: [unclosed\n", []string{"document 2 (line 11): malformed YAML", "line 1"}},
		{"alias bomb", bomb, []string{"document 1 (line 1)", "alias bomb", "xe (line 8)"}},
		{"100 MB document", job("      - {name: a, image: b, command: [/a]}\n") + "---\n" + huge, []string{"document 2 (line 11)", "16 MiB"}},
		{"a JobList mixing kinds", "apiVersion: batch/v1\nkind: JobList\nitems:\n- {kind: Job, metadata: {name: a}, spec: {template: {spec: {containers: []}}}}\n- {kind: Deployment, metadata: {name: d}}\n", []string{"document 1 (line 1), JobList", "items[1].kind is Deployment"}},
		{"no command, offline", job("      - {name: app, image: registry.example/app:1, args: [--all]}\n      - {name: proxy, image: cloud-sql-proxy, command: [/proxy]}\n"), []string{"document 1 (line 1), Job j, spec.template", `container "app"`, "--offline", "registry.example/app:1"}},
		{"a field of the wrong type", job("      - {name: app, image: b, command: /app}\n"), []string{"document 1 (line 1), Job j, spec.template", "command"}},
		{"a key in the wrong case", job("      - {name: a, image: i, Command: [/a]}\n      - {name: b, image: i, command: [/b]}\n"), []string{`spec.containers[0].Command`, `write "command"`}},
		{"a Helm template", job("      - name: a\n        image: {{ .Values.image }}\n"), []string{"Helm template", "helm template"}},
		{"two candidates for the job", job("      - {name: a, image: i, command: [/a]}\n      - {name: b, image: i, command: [/b]}\n"), []string{`"a" and "b"`, "job-signal.dev/main"}},
		{"kubexit", job("      - {name: a, image: i, command: [/kubexit/kubexit, /a], env: [{name: KUBEXIT_NAME, value: a}]}\n      - {name: b, image: cloud-sql-proxy, command: [/b]}\n"), []string{"kubexit", "KUBEXIT_BIRTH_DEPS"}},
		{"an https probe", job("      - {name: a, image: i, command: [/a]}\n      - {name: b, image: envoyproxy/envoy:v1.31, command: [envoy], readinessProbe: {httpGet: {scheme: HTTPS, port: 8443, path: /ready}}}\n"), []string{`container "b": readinessProbe is https`, "job-signal.dev/ready-tcp.b"}},
		{"a bad annotation", strings.Replace(job("      - {name: a, image: b, command: [/a]}\n      - {name: p, image: cloud-sql-proxy, command: [/p]}\n"), "  template:\n", "  template:\n    metadata: {annotations: {job-signal.dev/grace: soon}}\n", 1), []string{"Job j", "job-signal.dev/grace", "duration"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := run(t, tc.input, true)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestMain_(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Main(context.Background(), []string{"inject"}, strings.NewReader(""), &out, &errOut); code != 2 {
		t.Errorf("no -f: exit %d, want 2 (%s)", code, errOut.String())
	}
	if code := Main(context.Background(), []string{"inject", "-f", "/nonexistent"}, strings.NewReader(""), &out, &errOut); code != 1 || out.Len() > 0 {
		t.Errorf("missing file: exit %d", code)
	}
	out.Reset()
	if code := Main(context.Background(), []string{"inject", "--offline", "-f", "-"}, strings.NewReader(stream), &out, &errOut); code != 0 || !strings.Contains(out.String(), "job-signal-install") {
		t.Errorf("stdin: exit %d: %s", code, errOut.String())
	}
}
