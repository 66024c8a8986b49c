//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// plugin runs `kubectl job-signal inject --mode pair` with the cluster's
// kubeconfig, as a user would, on stdin, and returns the Job it wrote and
// its stderr. The pair: its install container is what LimitRanges are
// fitted for (native sidecars add no container). Its image is the suite's
// build (--image), which every cluster the suite runs on has.
func plugin(t *testing.T, s *space, stdin []byte, args ...string) (*batchv1.Job, string) {
	t.Helper()
	cmd := exec.CommandContext(s.ctx, filepath.Join(kube.BinDir(), "kubectl"), append([]string{"job-signal", "inject", "--mode", "pair", "--image", productImage, "-f", "-"}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+workBin()+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+kube.Kubeconfig())
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl job-signal inject %q: %v\n%s", args, err, stderr.String())
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict(stdout.Bytes(), &job); err != nil {
		t.Fatalf("the plugin wrote no Job: %v\n%s", err, stdout.String())
	}
	return &job, stderr.String()
}

// TestPluginLimitRange: in a namespace whose LimitRange sets a minimum
// and a maxLimitRequestRatio that the install container's own resources
// do not meet, the plugin (online) writes a Job whose Pod the API server
// admits and which completes, as the webhook's does; offline it says in
// one line that it did not check, and the API server refuses that Pod.
func TestPluginLimitRange(t *testing.T) {
	t.Parallel()
	s := limitedSpace(t, "plugin-limits")
	job := baselineJob("plugin-limited", false)
	job.TypeMeta = metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}
	job.Namespace = s.ns
	manifest, err := json.Marshal(job) // as kubectl get -o json writes it
	if err != nil {
		t.Fatal(err)
	}

	offline, stderr := plugin(t, s, manifest, "--offline")
	if !strings.Contains(stderr, "\nnote: LimitRanges not checked (--offline): ") && !strings.HasPrefix(stderr, "note: LimitRanges not checked (--offline): ") ||
		strings.Count(stderr, "LimitRanges not checked") != 1 {
		t.Errorf("offline, stderr %q: want one line that LimitRanges were not checked", stderr)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "offline-"}, Spec: offline.Spec.Template.Spec}
	if _, err := kube.Client().CoreV1().Pods(s.ns).Create(s.ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err == nil || !strings.Contains(err.Error(), "48Mi") {
		t.Errorf("the unchecked Pod: %v, want the LimitRange's refusal (the check matters)", err)
	}

	online, stderr := plugin(t, s, manifest)
	if strings.Contains(stderr, "LimitRanges not checked") {
		t.Errorf("online, stderr %q", stderr)
	}
	install := online.Spec.Template.Spec.InitContainers[0].Resources
	if cpu, mem := install.Requests[corev1.ResourceCPU], install.Requests[corev1.ResourceMemory]; cpu.Cmp(resource.MustParse("50m")) < 0 || mem.Cmp(resource.MustParse("48Mi")) < 0 {
		t.Errorf("install container: requests %v limits %v", install.Requests, install.Limits)
	}
	_, pods := s.run(online, completeWithOnePod, 4*time.Minute)
	expectLayout(t, pods[0], job.Spec.Template.Spec)
	for _, messages := range s.failedCreates() {
		t.Errorf("the Job controller could not create a Pod: %v", messages)
	}
}
