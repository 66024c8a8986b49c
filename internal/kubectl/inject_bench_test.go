package kubectl

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
)

// benchJob is bench/inject.go's injectJob.
const benchJob = `# nightly export %[1]d: the log shipper must stop when the export is done
apiVersion: batch/v1
kind: Job
metadata:
  name: export-%[1]d
spec:
  backoffLimit: 0
  template:
    metadata:
      annotations:
        job-signal.dev/main: export
        job-signal.dev/wait-for: log-shipper
    spec:
      restartPolicy: Never
      containers:
      - name: export
        image: busybox:1.37
        command: ["sh", "-c", "echo exporting %[1]d"]
      - name: log-shipper
        image: busybox:1.37
        command: ["tail", "-F", "/var/log/export.log"]
        volumeMounts:
        - {name: logs, mountPath: /var/log}
      volumes:
      - {name: logs, emptyDir: {}}
`

// BenchmarkInject1000 is Run on the 1,000 Jobs of the bench's inject row, for
// profiling the plugin (go test -cpuprofile) without starting processes.
func BenchmarkInject1000(b *testing.B) {
	var file strings.Builder
	for i := range 1000 {
		if i > 0 {
			file.WriteString("---\n")
		}
		fmt.Fprintf(&file, benchJob, i)
	}
	in := file.String()
	b.ReportAllocs()
	for b.Loop() {
		var out bytes.Buffer
		if err := Run(context.Background(), strings.NewReader(in), &out, io.Discard, &Options{Offline: true}); err != nil {
			b.Fatal(err)
		}
	}
}
