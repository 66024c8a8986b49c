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
