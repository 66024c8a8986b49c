//go:build e2e

package e2e

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/job-signal/job-signal/inject"
)

// nativeCase is a plain Job (classic sidecars, job-signal.dev/
// annotations, no job-signal in it) that the webhook injects, and how it
// must end whatever form it gets.
type nativeCase struct {
	name string
	job  func(name string) *batchv1.Job
	// native: on a cluster with native sidecars, auto makes the sidecars
	// native; otherwise the pair, with a reason containing reason.
	native bool
	reason string
	// order is the sidecars' order as native init containers (the
	// start order), when it is not the containers' own.
	order []string
	want  verdict
	phase corev1.PodPhase // of every Pod
	codes map[string]int32
	// loose are sidecars that the runtime stops with SIGTERM in the native
	// form (exit 0 or 143: a native sidecar's code does not decide the
	// Pod's phase) where the pair stops them cleanly (0).
	loose []string
	// drive acts on the running Job (delete its Pod); check reads what
	// the Pod's containers logged, in either form.
	drive func(s *space, job *batchv1.Job)
	check func(s *space, pod *corev1.Pod)
}

// plainJob is a Job as a user writes it before job-signal: main first,
// then its sidecars as classic containers, backoffLimit 0, and a grace
// period no longer than the pair's grace for a sidecar (10 s): mode auto
// gives native sidecars only where they end the Job no later than the
// pair, and inject does not know that busybox's termSidecar stops on TERM.
func plainJob(name string, annotations map[string]string, main string, sidecars ...corev1.Container) *batchv1.Job {
	containers := []corev1.Container{{Name: "main", Image: busyboxImage, ImagePullPolicy: kube.PullPolicy(),
		Command: []string{"sh", "-c", main}}}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: batchv1.JobSpec{BackoffLimit: ptr.To(int32(0)), Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Annotations: annotations},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, TerminationGracePeriodSeconds: ptr.To(int64(10)),
				Containers: append(containers, sidecars...)},
		}},
	}
}

// busyboxSidecar is termSidecar (exits 0 on TERM), as a classic container.
func busyboxSidecar(name string) corev1.Container {
	return corev1.Container{Name: name, Image: busyboxImage, ImagePullPolicy: kube.PullPolicy(), Command: []string{"sh", "-c", termSidecar}}
}

// probedProxy is the Cloud SQL Auth Proxy (the real one) with a probe in
// the manifest (a readinessProbe, or a startupProbe when startup): its
// own `wait` command, which asks its /startup, as its documentation
// suggests. An exec probe, not httpGet: the proxy serves /startup on
// 127.0.0.1 (--http-address), which the kubelet's HTTP and TCP probes, sent
// to the Pod's IP, never reach. --quitquitquit makes the known-sidecar
// table give the pair a quit URL.
func probedProxy(startup bool) corev1.Container {
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"/cloud-sql-proxy", "wait", "--max=2s"}}},
		PeriodSeconds: 1, TimeoutSeconds: 5, FailureThreshold: 60}
	c := corev1.Container{Name: "cloud-sql-proxy", Image: cloudSQLImage, ImagePullPolicy: kube.PullPolicy(),
		Command: []string{"/cloud-sql-proxy", "--port=5432", "--health-check", "--http-address=127.0.0.1",
			"--quitquitquit", "my-project:europe-west1:inventory"}}
	if startup {
		c.StartupProbe = probe
	} else {
		c.ReadinessProbe = probe
	}
	return c
}

const throughProxy = `echo 'SELECT 1;' | nc 127.0.0.1 5432 && echo connected through the proxy`

func expectProxyUsed(s *space, pod *corev1.Pod) {
	expectLog(s.t, s, pod.Name, "main", "connected through the proxy")
	expectLog(s.t, s, pod.Name, "cloud-sql-proxy", "Accepted connection from 127.0.0.1")
}

// nativeCases are the cases where native sidecars and the pair must agree: a proxy ready on a probe, a quit-URL
// proxy, two sidecars with a start order, OnFailure restarts,
// activeDeadlineSeconds, the Pod deleted, a Job that fails.
func nativeCases() []nativeCase {
	return []nativeCase{{
		name: "probe-ready-proxy", native: true,
		job: func(name string) *batchv1.Job {
			return plainJob(name, nil, throughProxy, probedProxy(false))
		},
		want: completeWithOnePod, phase: corev1.PodSucceeded, loose: []string{"cloud-sql-proxy"},
		check: expectProxyUsed,
	}, {
		name: "quit-url-proxy", reason: "quit",
		job: func(name string) *batchv1.Job {
			return plainJob(name, map[string]string{inject.Prefix + "quit-url.cloud-sql-proxy": "http://127.0.0.1:9091/quitquitquit"},
				throughProxy, probedProxy(false))
		},
		want: completeWithOnePod, phase: corev1.PodSucceeded,
		check: func(s *space, pod *corev1.Pod) {
			expectProxyUsed(s, pod)
			expectQuitByURL(s.t, s, pod.Name, "cloud-sql-proxy")
		},
	}, {
		// agent comes first among the containers, yet starts after the
		// proxy is ready: at start it connects through it, or exits 1.
		name: "start-order", native: true, order: []string{"cloud-sql-proxy", "agent"},
		job: func(name string) *batchv1.Job {
			agent := busyboxSidecar("agent")
			agent.Command = []string{"sh", "-c", `if echo | nc 127.0.0.1 5432; then echo proxy reachable at start; else echo proxy not reachable at start; exit 1; fi; ` + termSidecar}
			return plainJob(name, map[string]string{inject.Prefix + "after.agent": "cloud-sql-proxy", inject.Prefix + "main": "main"},
				shortMain, agent, probedProxy(true))
		},
		want: completeWithOnePod, phase: corev1.PodSucceeded, loose: []string{"cloud-sql-proxy"},
		check: func(s *space, pod *corev1.Pod) {
			expectLog(s.t, s, pod.Name, "agent", "proxy reachable at start")
			if c := containerStatus(pod, "agent"); c == nil || c.RestartCount != 0 {
				s.t.Errorf("agent restarted: %s", podSummary(pod))
			}
		},
	}, {
		name: "onfailure-restarts", native: true,
		job: func(name string) *batchv1.Job {
			job := plainJob(name, nil, `n=$(cat /scratch/n 2>/dev/null || echo 0); n=$((n+1)); echo $n > /scratch/n; echo attempt $n; [ $n -ge 2 ]`,
				busyboxSidecar("sidecar"))
			spec := &job.Spec.Template.Spec
			spec.RestartPolicy = corev1.RestartPolicyOnFailure
			spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
			spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}
			job.Spec.BackoffLimit = ptr.To(int32(3))
			return job
		},
		want: completeWithOnePod, phase: corev1.PodSucceeded,
		check: func(s *space, pod *corev1.Pod) {
			expectLog(s.t, s, pod.Name, "main", "attempt 2")
			if c := containerStatus(pod, "main"); c == nil || c.RestartCount != 1 || !s.sawPreviousExit(pod, "main", 1) {
				s.t.Errorf("want main restarted once in place, after exit 1: %s", podSummary(pod))
			}
			if c := containerStatus(pod, "sidecar"); c == nil || c.RestartCount != 0 {
				s.t.Errorf("the sidecar restarted: %s", podSummary(pod))
			}
		},
	}, {
		name: "active-deadline", native: true,
		job: func(name string) *batchv1.Job {
			job := plainJob(name, nil, `trap 'echo main got TERM; exit 143' TERM; echo main working; while true; do sleep 1 & wait $!; done`,
				busyboxSidecar("sidecar"))
			job.Spec.ActiveDeadlineSeconds = ptr.To(int64(20)) // main has started by then, even after the install container on a loaded machine
			return job
		},
		want: failedWithOnePod(batchv1.JobReasonDeadlineExceeded), phase: corev1.PodFailed, codes: map[string]int32{"main": 143},
	}, {
		// The Pod deleted while main runs; podReplacementPolicy Failed
		// makes the verdict follow the Pod's phase (TestDeletePodWhileMainRuns).
		name: "pod-deleted", native: true,
		job: func(name string) *batchv1.Job {
			job := plainJob(name, nil, `trap 'echo main got TERM; sleep 1; echo main exiting; exit 0' TERM; echo main working; while true; do sleep 1 & wait $!; done`,
				busyboxSidecar("sidecar"))
			job.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed)
			return job
		},
		want: completeWithOnePod, phase: corev1.PodSucceeded,
		drive: func(s *space, job *batchv1.Job) {
			pod := s.waitMainLogged(job, "main working")
			if err := kube.Client().CoreV1().Pods(s.ns).Delete(s.ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
				s.t.Fatalf("delete Pod: %v", err)
			}
		},
	}, {
		name: "main-fails", native: true,
		job: func(name string) *batchv1.Job {
			return plainJob(name, nil, `echo failing; exit 3`, busyboxSidecar("sidecar"))
		},
		want: failedWithOnePod(batchv1.JobReasonBackoffLimitExceeded), phase: corev1.PodFailed, codes: map[string]int32{"main": 3},
	}}
}

// TestWebhookAutoNativeOrPair: the shipped webhook, installed by its
// chart in mode auto, serves one namespace and, in mode pair, another;
// each case's Job is created in both at once. Where the cluster has native
// sidecars, the cases that map get them (no job-signal in the Pod) and the
// others the pair with the reason recorded; without, every case gets the
// pair. Either way the Job ends as it does with the pair: the same
// condition, counts, Pod phase and exit codes.
func TestWebhookAutoNativeOrPair(t *testing.T) {
	t.Parallel()
	enabled := map[string]string{inject.LabelInject: "enabled"}
	auto, pair := newSpace(t, "native-auto", enabled), newSpace(t, "native-pair", enabled)
	autoHook := startWebhook(t, chartModeFlags(t, inject.ModeAuto)...)
	pairHook := startWebhook(t, chartModeFlags(t, inject.ModePair)...)
	registerWebhook(t, autoHook.addr, auto.ns)
	registerWebhook(t, pairHook.addr, pair.ns)
	waitAutoDetected(t, autoHook)
	for _, c := range nativeCases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			a, p := auto.in(t), pair.in(t)
			pods := map[*space]*corev1.Pod{}
			created := map[*space]*batchv1.Job{}
			for _, s := range []*space{a, p} {
				created[s], _ = s.createJob(c.job(c.name))
			}
			for _, s := range []*space{a, p} {
				if c.drive != nil {
					c.drive(s, created[s])
				}
			}
			for _, s := range []*space{a, p} {
				done, _ := s.waitJob(created[s].Name, 4*time.Minute)
				expectJob(t, done, c.want.cond, c.want.reason, c.want.succeeded, c.want.failed)
				got := s.jobPods(done, c.want.pods)
				pods[s] = got[len(got)-1]
				expectPhase(t, pods[s], c.phase)
				if c.check != nil {
					c.check(s, pods[s])
				}
			}
			original := c.job(c.name).Spec.Template.Spec
			expectPair(t, pods[p], original, false, "")
			if c.native && kube.NativeSidecars() {
				expectNative(t, pods[a], original, c.order)
			} else {
				expectPair(t, pods[a], original, true, c.reason)
			}
			expectSameEnd(t, c, pods[p], pods[a])
		})
	}
}

// in is the space for a subtest: the same namespace and recorders,
// failures reported to t.
func (s *space) in(t *testing.T) *space {
	c := *s
	c.t = t
	return &c
}
