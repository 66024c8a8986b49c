// Every edit read back as kubectl reads it: long because the table of layouts is the test.

package kubectl

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/version"
)

// checkInject is the plugin's promise on any input, checked apart from
// the plugin's own check: inject (offline) either refuses, with nothing on
// stdout and each line of the error naming a document, or writes a file
// that kubectl's own reader (apimachinery's YAML-or-JSON decoder) reads as
// inject's ops applied to what it reads from the input, that injecting
// again leaves alone, and that uninject turns back into the input byte for
// byte. It returns whether inject wrote a file.
func checkInject(t *testing.T, input string, target ...inject.Target) bool {
	t.Helper()
	out, _, err := runFor(t, input, target...)
	if err != nil {
		for line := range strings.SplitSeq(err.Error(), "\n") {
			if !strings.HasPrefix(line, "document ") {
				t.Fatalf("a refusal line that names no document: %q\n--- input\n%q", line, input)
			}
		}
		return false
	}
	want, err := kubectlReads(input)
	if err != nil {
		return true // kubectl refuses it too; the plugin may pass it through
	}
	for i, obj := range want {
		if want[i], err = injected(obj, target...); err != nil {
			t.Fatalf("object %d: inject's ops: %v", i+1, err)
		}
	}
	got, err := kubectlReads(out)
	if err != nil {
		t.Fatalf("kubectl cannot read the output: %v\n--- input\n%q\n--- output\n%q", err, input, out)
	}
	if len(got) != len(want) {
		t.Fatalf("kubectl reads %d objects from the output, %d from the input\n--- input\n%q\n--- output\n%q", len(got), len(want), input, out)
	}
	for i := range want {
		if at, differ := difference(withoutKeptText(want[i]), withoutKeptText(got[i])); differ {
			t.Fatalf("object %d reads differently at %s\n--- input\n%q\n--- output\n%q", i+1, at, input, out)
		}
	}
	again, _, err := runFor(t, out, target...)
	if err != nil || again != out {
		t.Fatalf("inject again changes the output (%v)\n--- input\n%q\n--- output\n%q\n--- again\n%q", err, input, out, again)
	}
	if strings.Contains(input, inject.AnnotationInjected) || strings.Contains(input, "job-signal-") {
		return true // injected, or by hand: uninject gives the source before, or annotations
	}
	back, _, err := run(t, out, false)
	if err != nil || back != input {
		t.Fatalf("uninject does not give the input back (%v)\n--- input\n%q\n--- output\n%q\n--- uninjected\n%q", err, input, out, back)
	}
	return true
}

// kubectlReads decodes a stream as kubectl does, each object as generic
// values with json.Number numbers (nil for an empty document).
func kubectlReads(text string) ([]any, error) {
	dec := yaml.NewYAMLOrJSONDecoder(strings.NewReader(text), 4096)
	var objs []any
	for {
		var obj any
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, err
		}
		js, err := json.Marshal(obj)
		if err != nil {
			return nil, err
		}
		v, err := decodeValue(js)
		if err != nil {
			return nil, err
		}
		objs = append(objs, v)
	}
}

// injected applies inject's ops (offline, no image looked up) to every
// Pod template of obj.
func injected(obj any, target ...inject.Target) (any, error) {
	templates, _, err := findTemplates(&document{index: 1, line: 1}, obj, "", "", "")
	if err != nil || len(templates) == 0 {
		return obj, err
	}
	var ops []inject.Op
	for _, tp := range templates {
		js, _ := json.Marshal(tp.obj)
		plan, err := prepareFor(js, target...)
		if err != nil {
			return nil, err
		}
		images := map[string]inject.ImageConfig{} // offline: what the known-sidecar table holds
		for _, n := range plan.Needs() {
			if cfg, ok := inject.KnownImage(n); ok {
				images[n.Image] = cfg
			}
		}
		res, err := plan.Inject(images, version.Image)
		if err != nil {
			return nil, err
		}
		ops = append(ops, inject.Prefixed(tp.prefix, res.Ops)...)
	}
	js, _ := json.Marshal(obj)
	out, err := inject.Apply(js, ops)
	if err != nil {
		return nil, err
	}
	return decodeValue(out)
}

// withoutKeptText drops the source texts the plugin keeps in inject's
// record (the webhook keeps none): everything else must be the same.
func withoutKeptText(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			if s, isString := x.(string); isString && k == inject.AnnotationInjected {
				var rec map[string]any
				if json.Unmarshal([]byte(s), &rec) == nil {
					delete(rec, "text")
					x = rec
				}
			}
			out[k] = withoutKeptText(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = withoutKeptText(x)
		}
		return out
	}
	return v
}

// A job for the tests below: containers is its list, as written.
func jobWith(containers string) string {
	return "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\nspec:\n  template:\n    metadata:\n      annotations:\n        job-signal.dev/main: app\n    spec:\n      restartPolicy: Never\n      containers:\n" + containers +
		"      - name: proxy\n        image: cloud-sql-proxy\n        command: [/proxy]\n"
}

func TestDuplicateKeysRefused(t *testing.T) {
	for _, tc := range []struct{ name, input, key, line string }{
		{"YAML", jobWith("      - name: app\n        image: busybox\n        command: [/bin/true]\n        command: [sh, -c, 'echo other']\n"), `"command"`, "line 16"},
		{"JSON", `{"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
 "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
  {"name": "app", "image": "busybox", "command": ["/bin/true"],
   "command": ["sh", "-c", "echo other"]},
  {"name": "proxy", "image": "cloud-sql-proxy", "command": ["/proxy"]}]}}}}
`, `"command"`, "line 4"},
		{"YAML, the second document", "kind: ConfigMap\n---\n" + jobWith("      - name: app\n        image: busybox\n        command: [/bin/true]\n        command: [/bin/false]\n"), `"command"`, "line 18"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := run(t, tc.input, true)
			if err == nil {
				t.Fatal("a key twice in one mapping was injected")
			}
			for _, w := range []string{tc.key, tc.line, "twice", "keep one"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("more than one line: %q", err)
			}
		})
	}
}

// Documents that need no change pass through byte for byte, whatever they
// hold: text that looks like a template inside a string, a plain scalar
// over several lines, a key twice.
func TestUnchangedDocumentsPassThrough(t *testing.T) {
	configMap := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mesh\ndata:\n  template: |\n    {{ .Values.image }}\n    {{- if .Values.tls }}tls{{ end }}\n  plain: one\n    two\n    three\n  mesh: '{{ include \"x\" . }}'\n  mesh: twice\n"
	deployment := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: nginx\n        args: [a\n          b]\n"
	alone := "apiVersion: batch/v1\nkind: Job\nmetadata: {name: alone}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: app\n        image: busybox\n        env:\n        - name: NOTE\n          value: a plain scalar\n            over two lines\n"
	job := jobWith("      - name: app\n        image: busybox\n        command: [sh, -c, 'echo {{ not a template }}']\n")
	input := configMap + "---\n" + deployment + "---\n" + alone + "---\n" + job
	out, _, err := run(t, input, true)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, configMap+"---\n"+deployment+"---\n"+alone+"---\n") {
		t.Errorf("the documents without changes did not pass through:\n%s", out)
	}
	if !strings.Contains(out, "job-signal-install") || !strings.Contains(out, "echo {{ not a template }}") {
		t.Errorf("the job was not injected:\n%s", out)
	}
	checkInject(t, input)
}

// Template syntax where YAML structure would be is a template: refused
// with how to render it, naming the line.
func TestHelmTemplateRefused(t *testing.T) {
	input := "kind: ConfigMap\n---\n" + jobWith("      - name: app\n        image: {{ .Values.image }}\n        command: [/app]\n")
	_, _, err := run(t, input, true)
	if err == nil || !strings.Contains(err.Error(), "Helm template") || !strings.Contains(err.Error(), "line 16") {
		t.Fatalf("got %v", err)
	}
}

// The layouts the issue lists: whatever the editor does with them, the
// plugin never writes a file kubectl reads differently.
func TestIssueLayoutsNeverWrong(t *testing.T) {
	app := func(lines string) string { return jobWith("      - name: app\n        image: busybox\n" + lines) }
	jsonJob := `{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"template":{"metadata":{"annotations":{"job-signal.dev/main":"app"}},"spec":{"restartPolicy":"Never","containers":[{"name":"app","image":"busybox","command":["sh","-c","echo hi"],"args":[]},{"name":"proxy","image":"p","command":["/proxy"]}]}}}}`
	for name, input := range map[string]string{
		"args: []":                    app("        command: [sh, -c, echo hi]\n        args: []\n"),
		"args: [ ]":                   app("        command: [sh, -c, echo hi]\n        args: [ ]\n"),
		"args: [], JSON one line":     jsonJob,
		"args: [], JSON pretty":       prettyJSON(t, jsonJob),
		"keep chomping last":          app("        command:\n        - sh\n        - -c\n        - |+\n          echo hi\n\n\n"),
		"keep chomping last, folded":  app("        command:\n        - sh\n        - -c\n        - >+\n          echo hi\n\n\n"),
		"keep chomping, CRLF":         strings.ReplaceAll(app("        command:\n        - sh\n        - -c\n        - |+\n          echo hi\n\n\n"), "\n", "\r\n"),
		"JSON with a BOM":             "\ufeff" + prettyJSON(t, jsonJob),
		"quoted key in YAML":          app("        \"command\": [sh, -c, echo hi]\n"),
		"escaped key in JSON":         strings.Replace(jsonJob, `"command":["sh"`, `"comm\u0061nd":["sh"`, 1),
		"no final newline":            strings.TrimSuffix(app("        command: [sh, -c, echo hi]\n"), "\n"),
		"YAML starting with {":        "{apiVersion: batch/v1, kind: Job, metadata: {name: j}, spec: {template: {metadata: {annotations: {job-signal.dev/main: app}}, spec: {restartPolicy: Never, containers: [{name: app, image: busybox, command: [/app]}, {name: proxy, image: p, command: [/proxy]}]}}}}\n",
		"U+2028 in a quoted string":   app("        command: [sh, -c, \"echo \u2028hi\"]\n"),
		"anchor and alias":            app("        command: &c [sh, -c, echo hi]\n        args: *c\n"),
		"comment after the list item": app("        command: # the command\n        - sh # a shell\n        - -c\n        - echo hi # done\n"),
	} {
		t.Run(name, func(t *testing.T) {
			if !checkInject(t, input) {
				_, _, err := run(t, input, true)
				t.Logf("refused: %v", err)
			}
		})
	}
}

func prettyJSON(t *testing.T, compact string) string {
	var b bytes.Buffer
	if err := json.Indent(&b, []byte(compact), "", "  "); err != nil {
		t.Fatal(err)
	}
	return b.String() + "\n"
}

// verify refuses an edit that does not read back as inject's ops mean, or
// that uninject does not undo byte for byte, in one line that names the
// document and says what to do: whatever the editor gets wrong.
func TestVerifyRefusesWrongEdits(t *testing.T) {
	input := "kind: ConfigMap\n---\n" + jobWith("      - name: app\n        image: busybox\n        command: [sh, -c, echo hi]\n")
	docs, err := readDocuments(strings.NewReader(input))
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := parse(docs[1], &inject.Target{Mode: inject.ModePair})
	if err != nil {
		t.Fatal(err)
	}
	if err := injectAll(t.Context(), []*parsed{p}, &Options{Offline: true, Installer: version.Image}, io.Discard); err != nil {
		t.Fatal(err)
	}
	text, changed, err := editDocument(p, true)
	if err != nil || !changed {
		t.Fatalf("the edit: %v", err)
	}
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"not YAML", text + "      bad: [\n", []string{"would not read back", "malformed YAML"}},
		{"another meaning", text[:strings.LastIndex(text, "echo hi")] + "echo ho" + text[strings.LastIndex(text, "echo hi")+len("echo hi"):], []string{"would read differently at /spec/template/spec/containers/0/args/"}},
		{"a key twice", text + "kind: Job\n", []string{"would not read back", `key "kind" is twice`}},
		{"not undone", "# a comment inject never writes\n" + text, []string{"uninject would not give line 3 back"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := verify(p, tc.text, true)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range append(tc.want, "document 2 (line 3): inject cannot edit this layout", "nothing was written", "block style") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("more than one line: %q", err)
			}
		})
	}
	if err := verify(p, text, true); err != nil {
		t.Errorf("the plugin's own edit: %v", err)
	}
}

// A lone carriage return ends a line for YAML (and kubectl's reader):
// inject reads the lines around it as they are, and writes a file that
// uninject gives back byte for byte. Found by FuzzRoundTripNative (its
// input is in testdata/fuzz).
func TestLoneCarriageReturn(t *testing.T) {
	job := jobWith("      - name: app\n        image: busybox\n        command: [/app]\n")
	for _, input := range []string{
		strings.Replace(job, "batch/v1\n", "batch/v1\r", 1),
		strings.Replace(job, "image: busybox\n", "image: busybox\r", 1),
	} {
		if !checkInject(t, input) {
			_, _, err := run(t, input, true)
			t.Errorf("refused: %v", err)
		}
	}
}
