//go:build e2e

package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// injectShapes are Jobs laid out as charts and docs lay them out, run
// through `kubectl job-signal inject --offline` with no annotation saying
// what to do: the plugin must choose the job, and read readiness and the
// quit endpoint from the manifest.
var injectShapes = []struct {
	name, manifest string
	// flags the proxy's sidecar-watch must have been given
	flags []string
}{
	{
		// The proxy first, its health check and admin endpoint enabled
		// by its own args: the job is the other container, readiness is
		// /startup, and the proxy is stopped through /quitquitquit.
		name: "proxy-first-quit-endpoint",
		manifest: `apiVersion: batch/v1
kind: Job
metadata:
  name: proxy-first
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: 30
      containers:
        - name: cloud-sql-proxy
          image: gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.18.2
          command: [/cloud-sql-proxy]
          args:
            # health check and admin endpoint, as the proxy's docs enable them
            - "--health-check"
            - "--http-address=127.0.0.1"
            - "--port=5432"
            - "--quitquitquit"
            - "--admin-port=9091"
            - "proj:region:inst"
        - name: migrate
          image: busybox:1.37
          command: ["sh", "-c", "echo 'SELECT 1;' | nc 127.0.0.1 5432 && echo 'migrations applied'"]
`,
		flags: []string{"--ready-http", "http://127.0.0.1:9090/startup", "--quit-url", "http://127.0.0.1:9091/quitquitquit"},
	},
	{
		// Readiness from the proxy's readinessProbe on a named port, which
		// comes before what the known sidecar's args would give.
		name: "probe-derived-named-port",
		manifest: `apiVersion: batch/v1
kind: Job
metadata: {name: probe-derived}
spec:
  backoffLimit: 0
  template:
    metadata:
      annotations: {kubectl.kubernetes.io/default-container: report}
    spec:
      restartPolicy: Never
      containers:
      - name: report
        image: busybox:1.37
        command: [sh, -c, "echo | nc 127.0.0.1 5432 && echo 'report written'"]
      - name: proxy
        image: gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.18.2
        command: [/cloud-sql-proxy, --port=5432, --health-check, --http-address=127.0.0.1, --quitquitquit, proj:region:inst]
        ports: [{name: health, containerPort: 9090}]
        readinessProbe:
          httpGet: {path: /readiness, port: health}
`,
		flags: []string{"--ready-http", "http://127.0.0.1:9090/readiness", "--quit-url", "http://127.0.0.1:9091/quitquitquit"},
	},
}

// TestInjectShapes: each shape, injected by the plugin and created through
// the API, completes, with the flags the plugin read from the manifest.
func TestInjectShapes(t *testing.T) {
	t.Parallel()
	for _, shape := range injectShapes {
		t.Run(shape.name, func(t *testing.T) {
			t.Parallel()
			s := newSpace(t, "shape")
			cmd := exec.CommandContext(s.ctx, filepath.Join(kube.BinDir(), "kubectl"), "job-signal", "inject", "--offline", "-f", "-")
			cmd.Env = append(os.Environ(), "PATH="+workBin()+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+kube.Kubeconfig())
			cmd.Stdin = strings.NewReader(shape.manifest)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("kubectl job-signal inject: %v\n%s", err, stderr.String())
			}
			var job batchv1.Job
			if err := yaml.UnmarshalStrict(stdout.Bytes(), &job); err != nil {
				t.Fatalf("the plugin wrote no Job: %v\n%s", err, stdout.String())
			}
			localize(t, &job.Spec.Template.Spec)
			created, _ := s.createJob(&job)
			done, _ := s.waitJob(created.Name, 3*time.Minute)
			expectJob(t, done, batchv1.JobComplete, batchv1.JobReasonCompletionsReached, 1, 0)
			pods := s.jobPods(done, 1)
			expectPhase(t, pods[0], corev1.PodSucceeded)
			for _, c := range pods[0].Spec.Containers {
				if !strings.Contains(c.Image, "cloud-sql-proxy") {
					continue
				}
				for i := 0; i+1 < len(shape.flags); i += 2 {
					at := slices.Index(c.Command, shape.flags[i])
					if at < 0 || at+1 >= len(c.Command) || c.Command[at+1] != shape.flags[i+1] {
						t.Errorf("proxy %s runs %q: want %s %s", c.Name, c.Command, shape.flags[i], shape.flags[i+1])
					}
				}
				expectLog(t, s, pods[0].Name, c.Name, "/quitquitquit received request") // the real proxy's words
			}
			t.Logf("%s: %s", shape.name, podSummary(pods[0]))
		})
	}
}
