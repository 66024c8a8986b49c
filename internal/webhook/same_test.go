package webhook_test

import (
	"bytes"
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/yaml"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/kubectl"
	"github.com/job-signal/job-signal/internal/testing/webhooktest"
	"github.com/job-signal/job-signal/internal/webhook"
)

// sameJob has the Pod shapes that matter to both front ends: an init
// container, a native sidecar, annotations, OnFailure, $(VAR).
const sameJob = `apiVersion: batch/v1
kind: Job
metadata:
  name: report
spec:
  template:
    metadata:
      labels: {app: report}
      annotations:
        job-signal.dev/main: report
        job-signal.dev/ready-tcp.proxy: 127.0.0.1:5432
        job-signal.dev/quit-url.proxy: http://127.0.0.1:9091/quitquitquit
        job-signal.dev/grace: 20s
    spec:
      restartPolicy: OnFailure
      initContainers:
      - {name: migrate, image: busybox:1.37, command: [/migrate]}
      - {name: mesh, image: busybox:1.37, restartPolicy: Always, command: [/mesh]}
      containers:
      - name: report
        image: busybox:1.37
        command: [sh, -c, 'echo $(WHO)']
        env: [{name: WHO, value: me}]
        workingDir: /work
      - {name: proxy, image: busybox:1.37, command: [/proxy], args: [--port=5432]}
      - {name: logs, image: busybox:1.37, command: [tail, -F, /log]}
      volumes:
      - {name: data, emptyDir: {}}
`

// TestSameAsCLI: the Pod a Job creates from a template gets, through the
// webhook, exactly the spec and annotations `kubectl job-signal inject`
// writes into that template.
func TestSameAsCLI(t *testing.T) {
	var out, stderr bytes.Buffer
	if err := kubectl.Run(context.Background(), strings.NewReader(sameJob), &out, &stderr, &kubectl.Options{Offline: true}); err != nil {
		t.Fatalf("CLI: %v\n%s", err, stderr.String())
	}
	var viaCLI batchv1.Job
	if err := yaml.Unmarshal(out.Bytes(), &viaCLI); err != nil {
		t.Fatal(err)
	}
	var plain batchv1.Job
	if err := yaml.Unmarshal([]byte(sameJob), &plain); err != nil {
		t.Fatal(err)
	}
	pod := jobPod()
	pod.Labels, pod.Annotations, pod.Spec = plain.Spec.Template.Labels, plain.Spec.Template.Annotations, plain.Spec.Template.Spec

	s := webhooktest.Start(t, &webhook.Config{RegistryTimeout: time.Second})
	viaWebhook, resp := s.Review(t, pod)
	want := viaCLI.Spec.Template
	if !equality.Semantic.DeepEqual(viaWebhook.Spec, want.Spec) || !maps.Equal(viaWebhook.Annotations, want.Annotations) {
		a, _ := yaml.Marshal(viaWebhook.Spec)
		b, _ := yaml.Marshal(want.Spec)
		t.Fatalf("webhook and CLI differ:\n--- webhook %v\n%s--- CLI %v\n%s", viaWebhook.Annotations, a, want.Annotations, b)
	}
	if !inject.Injected(want.Annotations) {
		t.Fatal("the CLI did not inject")
	}
	if len(resp.Warnings) != 1 || !strings.Contains(stderr.String(), "terminationGracePeriodSeconds") {
		t.Errorf("both should warn about the stop budget: webhook %v, CLI %q", resp.Warnings, stderr.String())
	}
}
