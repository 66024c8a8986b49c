package kubectl

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConvertForms: inject in one form over the output of the other (a
// cluster upgraded, or --mode changed) is a clean conversion: it
// succeeds, and uninject gives the source back byte for byte. How many
// conversions are also byte for byte what inject writes from the source
// is logged (the record may carry texts kept by the form undone, and
// additions to an item the other form had laid over several lines are
// laid out so too).
func TestConvertForms(t *testing.T) {
	opts := testRegistry(t)
	pair, native := *opts, *opts
	native.Target = native137
	run := func(input string, o *Options) (string, error) {
		var out bytes.Buffer
		err := Run(context.Background(), strings.NewReader(input), &out, new(bytes.Buffer), o)
		return out.String(), err
	}
	inputs, _ := filepath.Glob("testdata/shapes/*")
	converted, same := 0, 0
	for _, in := range inputs {
		if strings.Contains(in, ".injected.") || strings.Contains(in, ".native.") {
			continue
		}
		source, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		asPair, errPair := run(string(source), &pair)
		asNative, errNative := run(string(source), &native)
		if errPair != nil || errNative != nil || asNative == asPair {
			continue // a form refuses it, or both leave it
		}
		for _, c := range []struct {
			name, from, direct string
			to                 *Options
		}{{"native over the pair", asPair, asNative, &native}, {"the pair over native", asNative, asPair, &pair}} {
			converted++
			got, err := run(c.from, c.to)
			if err != nil {
				t.Errorf("%s: %s: %v", in, c.name, err)
				continue
			}
			if back, err := run(got, nil); err != nil || back != string(source) {
				t.Errorf("%s: %s: uninject does not give the source back (%v):\n%s", in, c.name, err, back)
			}
			if got == c.direct {
				same++
			}
		}
	}
	if converted < 20 {
		t.Errorf("only %d conversions tried", converted)
	}
	t.Logf("%d conversions between the forms, %d of them byte for byte what inject writes from the source", converted, same)
}

// TestNativeThroughPlugin: the native form through the whole plugin
// (inject's own ops, the decode check) on layouts around initContainers:
// absent, null written three ways, [] in block YAML, CRLF, a keep-chomped
// block scalar and no final newline at the end; checkInject holds (read
// as kubectl reads it, stable, uninjected byte for byte).
func TestNativeThroughPlugin(t *testing.T) {
	pod := func(init, tail string) string {
		return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  restartPolicy: Never\n" + init +
			"  containers:\n  - name: app\n    image: a\n    command: [/app]\n  # the proxy\n  - name: proxy\n    image: p\n    command: [/proxy]" + tail
	}
	for name, input := range map[string]string{
		"absent":                  pod("", "\n"),
		"null, empty":             pod("  initContainers:\n", ""),
		"null, ~":                 pod("  initContainers: ~\n", "\n"),
		"null, null with comment": pod("  initContainers: null # none yet\n", "\n"),
		"[] in block YAML":        pod("  initContainers: []\n", "\n"),
		"an own init container":   pod("  initContainers:\n  - name: migrate\n    image: m\n    command: [/migrate]\n", "\n"),
		"CRLF, keep chomping at the end": strings.ReplaceAll(pod("  initContainers: ~\n",
			"\n    env:\n    - name: NOTE\n      value: |+\n        kept\n\n"), "\n", "\r\n"),
	} {
		t.Run(name, func(t *testing.T) {
			if !checkInject(t, input, native137) {
				t.Fatal("refused")
			}
			out, _, _ := runFor(t, input, native137)
			if !strings.Contains(out, `"form":"native"`) || !strings.Contains(out, "# the proxy") {
				t.Errorf("not native, or the proxy's comment lost:\n%s", out)
			}
		})
	}
}
