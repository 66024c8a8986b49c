//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// expectPodsGone waits until every Pod of the namespace has been deleted
// from the API and no process is left in its cgroup.
func (s *space) expectPodsGone(timeout time.Duration) {
	s.t.Helper()
	err := s.pods.waitFor(timeout, func(all []observation[*corev1.Pod]) (bool, string) {
		for _, o := range all {
			if !o.deleted {
				return false, "Pod " + o.obj.Name + " still exists: " + podSummary(o.obj)
			}
		}
		return true, ""
	})
	if err != nil {
		s.t.Fatal(err)
	}
	if !kube.Features().NodeProcesses {
		return // the node is not this machine: the API's word is all there is
	}
	for _, o := range s.pods.latest() {
		if pids, err := kube.PodProcesses(string(o.obj.UID)); err != nil || len(pids) > 0 {
			s.t.Errorf("Pod %s deleted, but processes %v are left in its cgroup (%v)", o.obj.Name, pids, err)
		}
	}
}

// waitMainLogged waits until the Job's Pod's main container has logged
// text, polling its log through the API, and returns the Pod. Other Jobs'
// Pods in the namespace are not looked at.
func (s *space) waitMainLogged(job *batchv1.Job, text string) *corev1.Pod {
	s.t.Helper()
	var pod *corev1.Pod
	err := s.pods.waitFor(2*time.Minute, func(all []observation[*corev1.Pod]) (bool, string) {
		for _, o := range all {
			if c := containerStatus(o.obj, "main"); metav1.IsControlledBy(o.obj, job) && c != nil && c.State.Running != nil {
				pod = o.obj
				return true, ""
			}
		}
		return false, "main is not running yet"
	})
	if err != nil {
		s.t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(s.logs(pod.Name, "main"), text) {
		if time.Now().After(deadline) {
			s.t.Fatalf("main never logged %q", text)
		}
		time.Sleep(200 * time.Millisecond) // a log has no watch: poll it, bounded
	}
	return pod
}

// waitPod waits until the named Pod (name "": the namespace's first Pod)
// is there and done says so, and returns that version.
func (s *space) waitPod(name string, timeout time.Duration, done func(*corev1.Pod) bool) *corev1.Pod {
	s.t.Helper()
	var pod *corev1.Pod
	err := s.pods.waitFor(timeout, func(all []observation[*corev1.Pod]) (bool, string) {
		for _, o := range all {
			if name == "" || o.obj.Name == name {
				pod = o.obj
				return done(o.obj), podSummary(o.obj)
			}
		}
		return false, fmt.Sprintf("no Pod %s yet", name)
	})
	if err != nil {
		s.t.Fatalf("Pod %s: %v", name, err)
	}
	return pod
}
