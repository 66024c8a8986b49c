//go:build e2e

package e2e

import (
	"bytes"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/version"
)

// TestWebhookInjectsJob: with the webhook installed by its chart (helm
// install, in mode pair), a plain Job with a classic sidecar (the one that
// never completes, TestClassicSidecarJobNeverCompletes) created in a
// namespace the release serves is injected and completes. The same Job in
// another namespace is not even sent to the webhook. And `kubectl
// job-signal inject` on that untouched Pod writes what the webhook wrote.
// On any cluster, the suite's or one it attached to.
func TestWebhookInjectsJob(t *testing.T) {
	t.Parallel()
	served := newSpace(t, "webhook-job")
	plain := newSpace(t, "webhook-plain")
	hook := installChart(t, []string{served.ns}, "mode=pair")

	job := baselineJob("classic-sidecar", false)
	created, _ := served.createJob(job.DeepCopy())
	left, _ := plain.createJob(job.DeepCopy())

	done, _ := served.waitJob(created.Name, 3*time.Minute)
	expectJob(t, done, batchv1.JobComplete, batchv1.JobReasonCompletionsReached, 1, 0)
	pods := served.jobPods(done, 1)
	expectPhase(t, pods[0], corev1.PodSucceeded)
	expectExits(t, pods[0], nil)
	expectLayout(t, pods[0], job.Spec.Template.Spec)

	// The namespace it does not serve: its Pod is stored as the Job
	// controller made it, and the webhook never heard of it. (That it then stays
	// Active is TestClassicSidecarJobNeverCompletes's finding.)
	untouched := plain.waitPod("", time.Minute, func(*corev1.Pod) bool { return true })
	if len(untouched.Spec.InitContainers) > 0 || untouched.Annotations[inject.AnnotationInjected] != "" || untouched.Annotations[inject.AnnotationSkipped] != "" {
		t.Errorf("Pod %s in the namespace not served was changed: init containers %d, annotations %v", untouched.Name, len(untouched.Spec.InitContainers), untouched.Annotations)
	}
	for i, c := range untouched.Spec.Containers {
		if want := job.Spec.Template.Spec.Containers[i]; !slices.Equal(c.Command, want.Command) || !slices.Equal(c.Args, want.Args) {
			t.Errorf("container %s runs %q %q, the Job says %q %q", c.Name, c.Command, c.Args, want.Command, want.Args)
		}
	}
	for _, e := range hook.events(t) {
		if e.Namespace == plain.ns {
			t.Errorf("the webhook was called for namespace %s (not served): %+v", plain.ns, e)
		}
	}
	expectSameAsCLI(t, plain, untouched, pods[0])
	background := metav1.DeletePropagationBackground
	if err := kube.Client().BatchV1().Jobs(plain.ns).Delete(plain.ctx, left.Name, metav1.DeleteOptions{PropagationPolicy: &background}); err != nil {
		t.Errorf("delete Job %s: %v", left.Name, err)
	}
}

// expectLayout checks that a Pod carries docs/layout.md's additions around the
// containers of original: both volumes, the install init container first,
// the first container under job-signal and the others under sidecar-watch,
// each with both mounts and its own command line as arguments.
func expectLayout(t *testing.T, pod *corev1.Pod, original corev1.PodSpec) {
	t.Helper()
	if !inject.Injected(pod.Annotations) {
		t.Errorf("Pod %s has no annotation %s", pod.Name, inject.AnnotationInjected)
	}
	for _, name := range []string{inject.StateVolume, inject.BinVolume} {
		i := slices.IndexFunc(pod.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == name })
		if i < 0 || pod.Spec.Volumes[i].EmptyDir == nil || pod.Spec.Volumes[i].EmptyDir.Medium != corev1.StorageMediumMemory {
			t.Errorf("Pod %s: no emptyDir volume %s with medium Memory: %+v", pod.Name, name, pod.Spec.Volumes)
		}
	}
	// The release's image (a process webhook's default, tagged here) or
	// the suite's by its own name (the chart's installs and the plugin say
	// --image): this build either way.
	installCmd := []string{"/usr/local/bin/job-signal", "install", inject.BinDir}
	if len(pod.Spec.InitContainers) == 0 || pod.Spec.InitContainers[0].Name != inject.InitContainer ||
		(pod.Spec.InitContainers[0].Image != version.Image && pod.Spec.InitContainers[0].Image != productImage) ||
		!slices.Equal(pod.Spec.InitContainers[0].Command, installCmd) {
		t.Errorf("Pod %s: the first init container is not %s running %q from %s or %s", pod.Name, inject.InitContainer, installCmd, version.Image, productImage)
	}
	for i, orig := range original.Containers {
		c := pod.Spec.Containers[i]
		wrapperPath, own := inject.SidecarWatchPath, append(slices.Clone(orig.Command), orig.Args...)
		if i == 0 {
			wrapperPath = inject.JobSignalPath
		}
		if len(c.Command) < 2 || c.Command[0] != wrapperPath || c.Command[len(c.Command)-1] != "--" || !slices.Equal(c.Args, own) {
			t.Errorf("container %s: command %q args %q, want %s ... -- %q", c.Name, c.Command, c.Args, wrapperPath, own)
		}
		if n := slices.Index(c.Command, "--name"); i > 0 && (n < 0 || n+1 >= len(c.Command) || c.Command[n+1] != c.Name) {
			t.Errorf("sidecar %s: command %q lacks --name %s", c.Name, c.Command, c.Name)
		}
		state := corev1.VolumeMount{Name: inject.StateVolume, MountPath: inject.StateDir}
		bin := corev1.VolumeMount{Name: inject.BinVolume, MountPath: inject.BinDir, ReadOnly: true}
		if !slices.Contains(c.VolumeMounts, state) || !slices.Contains(c.VolumeMounts, bin) {
			t.Errorf("container %s: mounts %+v lack %+v and %+v", c.Name, c.VolumeMounts, state, bin)
		}
	}
}

// expectSameAsCLI runs `kubectl job-signal inject` (the plugin, which
// kubectl finds on PATH) on a Pod as the webhook would have received it,
// has the API server admit the plugin's output without storing it (a
// dry-run create: the same defaults and admission as any Pod), and
// compares its spec and annotations with those of a Pod the webhook
// injected from the same template.
func expectSameAsCLI(t *testing.T, s *space, untouched, viaWebhook *corev1.Pod) {
	t.Helper()
	in := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: untouched.Name + "-cli", Namespace: untouched.Namespace,
			Labels: untouched.Labels, Annotations: untouched.Annotations, OwnerReferences: untouched.OwnerReferences},
		Spec: *untouched.Spec.DeepCopy(),
	}
	in.Spec.NodeName = "" // the webhook sees a Pod before it is scheduled
	text, err := yaml.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	// The webhook runs in mode pair here, with the suite's image for the
	// install container; the plugin, online, would choose native sidecars
	// on a cluster that has them.
	cmd := exec.CommandContext(s.ctx, filepath.Join(kube.BinDir(), "kubectl"), "job-signal", "inject", "--mode", "pair",
		"--image", viaWebhook.Spec.InitContainers[0].Image, "-f", "-")
	cmd.Env = append(os.Environ(), "PATH="+workBin()+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+kube.Kubeconfig())
	cmd.Stdin = bytes.NewReader(text)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl job-signal inject: %v\n%s", err, stderr.String())
	}
	var viaCLI corev1.Pod
	if err := yaml.UnmarshalStrict(stdout.Bytes(), &viaCLI); err != nil {
		t.Fatalf("kubectl job-signal inject wrote no Pod: %v\n%s", err, stdout.String())
	}
	admitted, err := kube.Client().CoreV1().Pods(s.ns).Create(s.ctx, &viaCLI, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatalf("the API server refuses the plugin's Pod: %v\n%s", err, stdout.String())
	}
	a, b := comparablePod(admitted), comparablePod(viaWebhook)
	if !equality.Semantic.DeepEqual(a.Spec, b.Spec) || !maps.Equal(a.Annotations, b.Annotations) {
		ya, _ := yaml.Marshal(a)
		yb, _ := yaml.Marshal(b)
		t.Errorf("the plugin and the webhook differ:\n--- plugin, admitted:\n%s--- webhook, stored:\n%s", ya, yb)
	}
}

// comparablePod keeps a Pod's spec and annotations, without what differs
// between two Pods of one template for reasons of their own: the node (set
// by the scheduler) and the name of the ServiceAccount token volume
// (random).
func comparablePod(p *corev1.Pod) *corev1.Pod {
	out := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: p.Annotations}, Spec: *p.Spec.DeepCopy()}
	out.Spec.NodeName = ""
	const token = "kube-api-access-"
	for i := range out.Spec.Volumes {
		if strings.HasPrefix(out.Spec.Volumes[i].Name, token) {
			out.Spec.Volumes[i].Name = token + "*"
		}
	}
	for _, list := range [][]corev1.Container{out.Spec.InitContainers, out.Spec.Containers} {
		for i := range list {
			for j := range list[i].VolumeMounts {
				if m := &list[i].VolumeMounts[j]; strings.HasPrefix(m.Name, token) {
					m.Name = token + "*"
				}
			}
		}
	}
	return out
}

// gatedPod is a Pod labelled for injection that is never scheduled (a
// scheduling gate holds it): for tests of admission alone.
func gatedPod(name, image string, command []string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{inject.LabelInject: "enabled"}},
		Spec: corev1.PodSpec{
			RestartPolicy:   corev1.RestartPolicyNever,
			SchedulingGates: []corev1.PodSchedulingGate{{Name: "e2e.job-signal.dev/admission-only"}},
			Containers: []corev1.Container{
				{Name: "main", Image: image, ImagePullPolicy: corev1.PullNever, Command: command, Args: []string{"--once"}},
				{Name: "sidecar", Image: busyboxImage, ImagePullPolicy: corev1.PullNever, Command: []string{"sh", "-c", termSidecar}},
			},
			TerminationGracePeriodSeconds: ptr.To(int64(10)),
		},
	}
}
