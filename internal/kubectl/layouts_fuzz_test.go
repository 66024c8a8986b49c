package kubectl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode"
)

// FuzzInjectLayouts builds real-shaped manifests from choices (the
// layouts kubectl accepts that people's tools write: flow lists empty and
// full, block lists, block scalars with every chomping and indentation
// indicator, anchors, comments everywhere, a BOM, CRLF, no final newline,
// a key twice, JSON pretty or on one line with escapes, documents that
// need no change around) with word, an arbitrary string, in the command,
// a comment and a ConfigMap, and checks the plugin's promise on each
// (checkInject): a one-line refusal with nothing written, or a file
// kubectl reads as inject means, stable, that uninject gives back.
func FuzzInjectLayouts(f *testing.F) {
	for i := range uint64(96) {
		f.Add(i*0x9e3779b97f4a7c15, "echo hi")
	}
	f.Add(uint64(0), "a: b # c")
	f.Add(uint64(1), "line one\nline two\n")
	f.Add(uint64(2), "\u2028{{ .Values.x }}\t'\"\\")
	f.Fuzz(func(t *testing.T, choices uint64, word string) {
		checkInject(t, layout(choices, word))
	})
}

// chooser takes small choices off a number.
type chooser uint64

func (c *chooser) pick(n int) int {
	v := int(uint64(*c) % uint64(n))
	*c = chooser(uint64(*c) / uint64(n))
	return v
}

func (c *chooser) bit() bool { return c.pick(2) == 1 }

// layout builds one manifest from choices and word.
func layout(choices uint64, word string) string {
	c := chooser(choices)
	if c.pick(4) == 0 {
		return jsonLayout(&c, word)
	}
	quoted, _ := json.Marshal(word)
	w := string(quoted)
	comment := func() string {
		if c.bit() {
			return " # " + strings.Map(func(r rune) rune {
				if r == '\n' || r == '\r' {
					return ' '
				}
				return r
			}, word)
		}
		return ""
	}
	var b strings.Builder
	before, after := c.pick(3), c.pick(3)
	if before == 1 {
		fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: mesh}\ndata:\n  template: |\n    {{ .Values.image }}\n  plain: one\n    two\n  word: %s\n---%s\n", w, comment())
	}
	if before == 2 {
		b.WriteString("# only a comment\n---\n")
	}
	fmt.Fprintf(&b, "apiVersion: batch/v1%s\nkind: Job\nmetadata:\n  name: gen\nspec:\n  template:\n    metadata:\n", comment())
	if c.bit() {
		b.WriteString("      annotations: {job-signal.dev/main: app}\n")
	} else {
		fmt.Fprintf(&b, "      annotations:%s\n        job-signal.dev/main: app\n", comment())
	}
	fmt.Fprintf(&b, "    spec:\n      restartPolicy: Never%s\n", comment())
	dash := "      - "
	item := "        "
	if c.bit() {
		dash, item = "      -   ", "          "
	}
	b.WriteString("      containers:" + comment() + "\n")
	if c.bit() {
		b.WriteString("      # the job\n")
	}
	b.WriteString(dash + "name: app\n" + item + "image: busybox" + comment() + "\n")
	command := listLayout(&c, item, "command", []string{`sh`, `-c`}, w, word)
	b.WriteString(command)
	args := c.pick(6)
	if strings.Contains(command, "args:") {
		args = 0 // an alias of the command
	}
	switch args {
	case 1:
		b.WriteString(item + "args: []\n")
	case 2:
		b.WriteString(item + "args: [ ]" + comment() + "\n")
	case 3:
		b.WriteString(item + "args:\n" + item + "- --x\n")
	case 4:
		b.WriteString(item + "args:\n")
	case 5:
		b.WriteString(item + "args: [--x, " + w + "]\n")
	}
	switch c.pick(4) {
	case 1:
		b.WriteString(item + "volumeMounts: []\n")
	case 2:
		b.WriteString(item + "volumeMounts:\n" + item + "- {name: logs, mountPath: /var/log}\n")
	case 3:
		b.WriteString(item + "volumeMounts: [{name: logs, mountPath: /var/log}]\n")
	}
	if c.pick(6) == 0 {
		b.WriteString(item + "command: [/bin/false]\n") // a key twice
	}
	if c.bit() {
		b.WriteString(dash + "{name: proxy, image: cloud-sql-proxy, command: [/proxy]}\n")
	} else {
		b.WriteString(dash + "name: proxy\n" + item + "image: cloud-sql-proxy\n" + item + "command: [/proxy]" + comment() + "\n")
	}
	switch c.pick(4) {
	case 1:
		b.WriteString("      volumes: []\n")
	case 2:
		b.WriteString("      volumes:\n      - name: logs\n        emptyDir: {}\n")
	case 3:
		b.WriteString("      volumes: [{name: logs, emptyDir: {}}]" + comment() + "\n")
	}
	if c.bit() {
		b.WriteString("# the end\n")
	}
	if after == 1 {
		b.WriteString("---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {template: {spec: {containers: [{name: web, image: nginx}]}}}\n")
	}
	text := b.String()
	if c.bit() {
		text = "\ufeff" + text
	}
	if c.bit() {
		text = strings.ReplaceAll(text, "\n", "\r\n")
	}
	if c.bit() {
		text = strings.TrimRight(text, "\r\n")
	}
	return text
}

// listLayout writes key: words + word in one of the layouts a list takes.
func listLayout(c *chooser, item, key string, words []string, quoted, word string) string {
	all := append(append([]string{}, words...), quoted)
	switch c.pick(7) {
	case 0:
		return item + key + ": [" + strings.Join(all, ", ") + "]\n"
	case 1:
		return item + key + ": [\"" + strings.Join(words, `", "`) + "\",\n" + item + "  " + quoted + "]\n"
	case 2, 3:
		in := item
		if c.bit() {
			in += "  "
		}
		var b strings.Builder
		b.WriteString(item + key + ":\n")
		for _, w := range all {
			fmt.Fprintf(&b, "%s- %s\n", in, w)
		}
		return b.String()
	case 4:
		return item + key + ": &words [" + strings.Join(all, ", ") + "]\n" + item + "args: *words\n"
	case 5:
		return item + key + ":\n"
	}
	// A block scalar, last: every chomping and indentation indicator.
	var b strings.Builder
	b.WriteString(item + key + ":\n")
	for _, w := range words {
		fmt.Fprintf(&b, "%s- %s\n", item, w)
	}
	style := []string{"|", ">"}[c.pick(2)]
	chomp := []string{"", "-", "+"}[c.pick(3)]
	indent := []string{"", "2", "4"}[c.pick(3)]
	if c.bit() {
		style += chomp + indent
	} else {
		style += indent + chomp
	}
	pad := item + "  "
	if indent == "4" {
		pad = item + "    "
	}
	fmt.Fprintf(&b, "%s- %s\n", item, style)
	for line := range strings.SplitSeq(strings.TrimRight(word, "\n"), "\n") {
		b.WriteString(pad + strings.TrimRightFunc(line, unicode.IsSpace) + "\n")
	}
	b.WriteString(strings.Repeat("\n", c.pick(3)))
	return b.String()
}

// jsonLayout builds the Job as JSON: on one line or indented, with the
// escapes JSON allows in keys and strings.
func jsonLayout(c *chooser, word string) string {
	app := map[string]any{"name": "app", "image": "busybox", "command": []string{"sh", "-c", word}}
	switch c.pick(3) {
	case 1:
		app["args"] = []string{}
	case 2:
		app["args"] = []string{"--x"}
	}
	if c.bit() {
		app["volumeMounts"] = []any{}
	}
	spec := map[string]any{"restartPolicy": "Never", "containers": []any{app, map[string]any{"name": "proxy", "image": "cloud-sql-proxy", "command": []string{"/proxy"}}}}
	if c.bit() {
		spec["volumes"] = []any{}
	}
	job := map[string]any{"apiVersion": "batch/v1", "kind": "Job", "metadata": map[string]any{"name": "gen"},
		"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{"annotations": map[string]string{"job-signal.dev/main": "app"}}, "spec": spec}}}
	raw, _ := json.Marshal(job)
	text := string(raw)
	if c.bit() {
		text = strings.Replace(text, `"command":["sh"`, `"comm\u0061nd":["\u0073h"`, 1)
	}
	if c.bit() {
		text = strings.ReplaceAll(text, `/`, `\/`)
	}
	if c.pick(6) == 0 {
		text = strings.Replace(text, `"image":"busybox"`, `"image":"busybox","image":"alpine"`, 1)
	}
	if indent := c.pick(3); indent > 0 {
		var b bytes.Buffer
		if json.Indent(&b, []byte(text), "", []string{"  ", "\t"}[indent-1]) == nil {
			text = b.String()
		}
	}
	if c.bit() {
		text += "\n"
	}
	if c.bit() {
		text = strings.ReplaceAll(text, "\n", "\r\n")
	}
	if c.bit() {
		text = "\ufeff" + text
	}
	return text
}
