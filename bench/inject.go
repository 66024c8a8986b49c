package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// injectJob is one document of the inject benchmark: a Job with a main
// container and a classic sidecar, both with a command (no registry), a
// comment and the annotations a user would set.
const injectJob = `# nightly export %[1]d: the log shipper must stop when the export is done
apiVersion: batch/v1
kind: Job
metadata:
  name: export-%[1]d
spec:
  backoffLimit: 0
  template:
    metadata:
      annotations:
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

// inject times `kubectl job-signal inject --offline -f FILE` as a user
// runs it, on one document and on 1,000: the first is the plugin's fixed
// cost, the difference the cost per document.
func (b *bench) inject() error {
	runs := b.runs(10)
	fmt.Fprintf(os.Stderr, "bench: kubectl job-signal inject, %d runs\n", runs)
	var single row
	for _, docs := range []int{1, 1000} {
		var file bytes.Buffer
		for i := range docs {
			if i > 0 {
				file.WriteString("---\n")
			}
			fmt.Fprintf(&file, injectJob, i)
		}
		path := filepath.Join(b.work, fmt.Sprintf("inject-%d.yaml", docs))
		if err := os.WriteFile(path, file.Bytes(), 0o644); err != nil {
			return err
		}
		var samples []time.Duration
		var outSize int
		for range runs {
			cmd := exec.Command(b.path("kubectl-job_signal"), "inject", "--offline", "-f", path)
			var stdout bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
			begin := time.Now()
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("kubectl-job_signal inject on %d documents: %w", docs, err)
			}
			samples = append(samples, time.Since(begin))
			outSize = stdout.Len()
		}
		r := newRow(fmt.Sprintf("inject: `kubectl job-signal inject --offline`, %d Job document(s)", docs), samples)
		r.note = fmt.Sprintf("%d KB of YAML in, %d KB out; wall time from fork to reaped", file.Len()/1000, outSize/1000)
		if docs == 1 {
			single = r
		} else {
			perDoc := (r.p50 - single.p50) / time.Duration(docs-1)
			r.note += fmt.Sprintf("; %s per further document (p50, over the one-document run)", human(perDoc))
		}
		b.rows = append(b.rows, r)
	}
	return nil
}
