package kubectl

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/job-signal/job-signal/internal/testing/benchjobs"
)

// BenchmarkInject1000 is Run on the 1,000 Jobs of the bench's inject row, for
// profiling the plugin (go test -cpuprofile) without starting processes.
func BenchmarkInject1000(b *testing.B) {
	in := benchjobs.File(1000)
	b.ReportAllocs()
	for b.Loop() {
		var out bytes.Buffer
		if err := Run(context.Background(), strings.NewReader(in), &out, io.Discard, &Options{Offline: true}); err != nil {
			b.Fatal(err)
		}
	}
}
