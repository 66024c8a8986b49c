// Package benchjobs is the input of the inject benchmark: make bench's
// inject row and internal/kubectl's BenchmarkInject1000 inject the same file.
package benchjobs

import (
	"fmt"
	"strings"
)

// job is one document: a Job with a main container and a classic sidecar,
// both with a command (no registry), a comment and the annotations a user
// would set.
const job = `# nightly export %[1]d: the log shipper must stop when the export is done
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

// File is n such Jobs, numbered from 0, as one YAML stream.
func File(n int) string {
	var file strings.Builder
	for i := range n {
		if i > 0 {
			file.WriteString("---\n")
		}
		fmt.Fprintf(&file, job, i)
	}
	return file.String()
}
