//go:build e2e

package e2e

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Kubernetes' own behaviour, without job-signal: the bug the
// project fixes (a classic sidecar keeps a finished Job's Pod running, so
// the Job never completes) and the native sidecar it is compared with.

// baselineJob is the same one-sidecar Job with the sidecar unwrapped: a
// classic one (a second container) or a native one (an init container
// with restartPolicy Always).
func baselineJob(name string, native bool) *batchv1.Job {
	side := corev1.Container{Name: "sidecar", Image: busyboxImage, ImagePullPolicy: kube.PullPolicy(),
		Command: []string{"sh", "-c", termSidecar}}
	main := corev1.Container{Name: "main", Image: busyboxImage, ImagePullPolicy: kube.PullPolicy(),
		Command: []string{"sh", "-c", shortMain}}
	spec := corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, TerminationGracePeriodSeconds: ptr.To(int64(10))}
	if native {
		side.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
		spec.InitContainers, spec.Containers = []corev1.Container{side}, []corev1.Container{main}
	} else {
		spec.Containers = []corev1.Container{main, side}
	}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       batchv1.JobSpec{BackoffLimit: ptr.To(int32(0)), Template: corev1.PodTemplateSpec{Spec: spec}},
	}
}

// noSidecarJob is the same Job without any sidecar: main alone, unwrapped.
// Nothing with a sidecar can complete sooner; the timing's floor.
func noSidecarJob(name string) *batchv1.Job {
	job := baselineJob(name, false)
	job.Spec.Template.Spec.Containers = job.Spec.Template.Spec.Containers[:1]
	return job
}

// installOnlyJob is main alone and unwrapped in the layout of a wrapped
// Job: the same volumes and the install init container before it. It tells
// what the layout costs apart from job-signal and its sidecars.
func installOnlyJob(name string) *batchv1.Job {
	job := wrapped{name: name, main: []string{"sh", "-c", shortMain}}.job()
	main := &job.Spec.Template.Spec.Containers[0]
	main.Command, main.Args = main.Args, nil
	return job
}

// TestClassicSidecarJobNeverCompletes reproduces kubernetes#25908 through
// the Job controller: main exits 0, the sidecar does not, and the Job stays
// Active with its Pod Running.
func TestClassicSidecarJobNeverCompletes(t *testing.T) {
	t.Parallel()
	s := newSpace(t, "classic")
	created, _ := s.createJob(baselineJob("classic-sidecar", false))
	err := s.pods.waitFor(2*time.Minute, func(all []observation[*corev1.Pod]) (bool, string) {
		for _, o := range all {
			if c := containerStatus(o.obj, "main"); c != nil && c.State.Terminated != nil {
				return c.State.Terminated.ExitCode == 0, podSummary(o.obj)
			}
		}
		return false, "main has not exited"
	})
	if err != nil {
		t.Fatal(err)
	}
	// The bug is an absence (of completion): wait for any change that would
	// end it, and expect none for a minute.
	const observe = 60 * time.Second
	var broke string
	err = s.jobs.waitFor(observe, func(all []observation[*batchv1.Job]) (bool, string) {
		job := all[0].obj
		if jobFinished(job) || job.Status.Active != 1 {
			broke = jobSummary(job)
			return true, ""
		}
		for _, o := range s.pods.latest() {
			if o.obj.Status.Phase != corev1.PodRunning {
				broke = podSummary(o.obj)
				return true, ""
			}
		}
		return false, "still Active"
	})
	if err == nil {
		t.Fatalf("want the Job Active with its Pod Running for %v, but: %s", observe, broke)
	}
	job, _ := kube.Client().BatchV1().Jobs(s.ns).Get(s.ctx, created.Name, metav1.GetOptions{})
	t.Logf("main done, and after %v: %s (as expected: the bug)", observe, jobSummary(job))
}

// TestNativeSidecarJobCompletes: the same Job with the sidecar as a native
// sidecar (Kubernetes 1.29+) completes.
func TestNativeSidecarJobCompletes(t *testing.T) {
	requireNativeSidecars(t)
	t.Parallel()
	s := newSpace(t, "native")
	_, pods := s.run(baselineJob("native-sidecar", true), completeWithOnePod, 3*time.Minute)
	expectPhase(t, pods[0], corev1.PodSucceeded)
	expectExits(t, pods[0], nil)
}
