package kubectl

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestWrittenStringsStayStrings: every string inject writes reads back as
// that string with kubectl's YAML 1.1 reader, in block and in flow style.
func TestWrittenStringsStayStrings(t *testing.T) {
	words := []string{"on", "no", "y", "Y", "off", "yes", "~", "null", "0x10", "0o17", "017", "1e3", "1.0", ".5", "-1", "+1", "1_000",
		"12:30", "2001-12-14", ".inf", "-.inf", ".nan", "=", "<<", "-", "--", "--x=1", "a: b", "a #b", "#x", "[x]", "{x}", "x,y", "'q'", `"q"`,
		"", " lead", "trail ", "tab\t", "line\nbreak", "\u2028", "ünï", "$(VAR)", "$$", "@at", "%p", "`b`", "!tag", "&a", "*a", "|", ">", "?", "http://x:1/y", "10m", "16Mi", "a:", "-a", "-1a"}
	for _, inFlow := range []bool{false, true} {
		st := style{nl: "\n", step: 2}
		for _, w := range words {
			text := "k: " + st.scalar(w, inFlow) + "\n"
			if inFlow {
				text = "k: [" + st.scalar(w, inFlow) + "]\n"
			}
			js, err := yaml.YAMLToJSON([]byte(text))
			if err != nil {
				t.Errorf("%q written as %q: kubectl's reader refuses it: %v", w, text, err)
				continue
			}
			var got struct{ K any }
			json.Unmarshal(js, &got)
			want := any(w)
			if inFlow {
				want = []any{w}
			}
			if b1, b2 := mustJSON(got.K), mustJSON(want); b1 != b2 {
				t.Errorf("%q written as %q reads back as %s", w, text, b1)
			}
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestDeepNesting: a document nested far deeper than any manifest is
// refused (or passed through) at a cost in proportion to its size.
func TestDeepNesting(t *testing.T) {
	const depth = 9000
	for _, doc := range []string{
		`{"apiVersion":"v1","kind":"ConfigMap","data":` + strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth) + "}",
		`{"apiVersion":"v1","kind":"Pod","spec":{"restartPolicy":"Never","containers":[{"name":"a","image":"i","command":["/a"]}],"x":` + strings.Repeat(`[`, depth) + strings.Repeat("]", depth) + "}}",
		"apiVersion: v1\nkind: ConfigMap\ndata: " + strings.Repeat("[", depth) + strings.Repeat("]", depth) + "\n",
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		run(t, doc, true)
		runtime.ReadMemStats(&after)
		if used := after.TotalAlloc - before.TotalAlloc; used > 64<<20 {
			t.Errorf("a %d-byte document nested %d deep cost %d MB", len(doc), depth, used>>20)
		}
	}
}

// TestFieldsKept: what inject does not change stays, whatever the typed
// decoding of this build knows: two mounts of one volume (subPath), a
// null metadata, fields the API server defaulted or that a newer version
// added, JSON escapes and surrogate pairs, another group's Job.
func TestFieldsKept(t *testing.T) {
	for _, tc := range []struct{ name, input, want string }{
		{"two mounts of one volume", "apiVersion: v1\nkind: Pod\nmetadata: {name: p, annotations: {job-signal.dev/main: a}}\nspec:\n  restartPolicy: Never\n  containers:\n  - name: a\n    image: i\n    command: [/a]\n    volumeMounts:\n    - {name: conf, mountPath: /etc/a}\n    - {name: conf, mountPath: /etc/b, subPath: b}\n  - {name: b, image: i, command: [/b]}\n",
			"- {name: conf, mountPath: /etc/b, subPath: b}"},
		{"null template metadata", "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    metadata:\n    spec:\n      restartPolicy: Never\n      containers:\n      - {name: a, image: i, command: [/a]}\n      - {name: b, image: cloud-sql-proxy, command: [/b]}\n",
			"job-signal.dev/injected"},
		{"defaulted and unknown fields", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":{"job-signal.dev/main":"a"}},"spec":{"restartPolicy":"Never","containers":[{"name":"a","image":"i","command":["/a"],"terminationMessagePath":"/dev/termination-log","newField":{"n":1.50}},{"name":"b","image":"i","command":["echo \ud83d\ude00 \u0026"]}]}}`,
			`"newField":{"n":1.50}`},
		{"surrogate pairs", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":{"job-signal.dev/main":"a"}},"spec":{"restartPolicy":"Never","containers":[{"name":"a","image":"i","command":["/a"]},{"name":"b","image":"i","command":["echo \ud83d\ude00 \u0026"]}]}}`,
			`"echo \ud83d\ude00 \u0026"`},
		{"another group's Job", "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: v}\nspec: {tasks: [{replicas: 1}]}\n",
			"spec: {tasks: [{replicas: 1}]}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := run(t, tc.input, true)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("output lacks %q:\n%s", tc.want, out)
			}
			again, _, err := run(t, out, true)
			if err != nil || again != out {
				t.Errorf("inject twice differs (%v):\n%s", err, again)
			}
			back, _, err := run(t, out, false)
			if err != nil || back != tc.input {
				t.Errorf("uninject(inject(x)) != x (%v):\n%s", err, back)
			}
		})
	}
}

// TestNothingToDo: a Job with one container passes through untouched,
// offline too, with a note, whether the container has a command or not:
// no install init container for a Pod that needs none.
func TestNothingToDo(t *testing.T) {
	for _, c := range []string{"{name: a, image: registry.example/a:1}", "{name: a, image: registry.example/a:1, command: [/a]}"} {
		in := "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - " + c + "\n"
		out, stderr, err := run(t, in, true)
		if err != nil || out != in || !strings.Contains(stderr, "nothing to do") {
			t.Errorf("%s: err %v, stderr %q, output:\n%s", c, err, stderr, out)
		}
	}
}
