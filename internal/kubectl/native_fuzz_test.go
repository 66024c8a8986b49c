package kubectl

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/job-signal/job-signal/inject"
)

// native137 is a target of native sidecars on a cluster that has them.
var native137 = inject.Target{Mode: inject.ModeNative, Cluster: inject.Cluster{Known: true, NativeSidecars: true, Version: "v1.37.2"}}

// runFor is run (inject, offline) for target (none: the pair).
func runFor(t *testing.T, input string, target ...inject.Target) (string, string, error) {
	t.Helper()
	if len(target) == 0 {
		return run(t, input, true)
	}
	var out, stderr bytes.Buffer
	err := Run(context.Background(), strings.NewReader(input), &out, &stderr, &Options{Offline: true, Target: target[0]})
	if err != nil && out.Len() > 0 {
		t.Errorf("an error, and yet %d bytes on stdout", out.Len())
	}
	return out.String(), stderr.String(), err
}

// prepareFor is inject's plan of a template for target (none: the pair).
func prepareFor(js []byte, target ...inject.Target) (*inject.Plan, error) {
	if len(target) == 0 {
		return inject.Prepare(js)
	}
	return inject.PrepareFor(js, target[0])
}

// FuzzInjectNative: FuzzInjectLayouts with --mode native on a cluster
// with native sidecars: a one-line refusal, or a file that reads as
// inject's ops say, stable, that uninject gives back byte for byte.
func FuzzInjectNative(f *testing.F) {
	for i := range uint64(96) {
		f.Add(i*0x9e3779b97f4a7c15, "echo hi")
	}
	f.Add(uint64(0), "a: b # c")
	f.Fuzz(func(t *testing.T, choices uint64, word string) {
		checkInject(t, layout(choices, word), native137)
	})
}

// FuzzRoundTripNative: FuzzRoundTrip's mutations of real manifests with
// --mode native.
func FuzzRoundTripNative(f *testing.F) {
	addShapes(f)
	f.Fuzz(func(t *testing.T, input string) {
		if strings.Contains(input, "job-signal") {
			return
		}
		checkInject(t, input, native137)
	})
}

// TestShapesNative: TestShapes with --mode native on a cluster that has
// native sidecars: goldens NAME.native.EXT (a refusal's message where
// native sidecars cannot serve the Pod), uninject byte for byte.
func TestShapesNative(t *testing.T) {
	opts := testRegistry(t)
	opts.Target = native137
	checkShapes(t, opts, "native")
}
