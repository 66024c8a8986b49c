package inject_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/job-signal/job-signal/inject"
)

// TestAdmissible: a Pod that injection would make one Kubernetes refuses,
// or that job-signal cannot run in, is refused with the field named by
// Prepare (before any registry is asked); a Pod whose pod-level requests
// leave room for the install container is injected.
func TestAdmissible(t *testing.T) {
	requests := func(cpu, memory string) corev1.ResourceList {
		l := corev1.ResourceList{}
		if cpu != "" {
			l[corev1.ResourceCPU] = resource.MustParse(cpu)
		}
		if memory != "" {
			l[corev1.ResourceMemory] = resource.MustParse(memory)
		}
		return l
	}
	pod := func(change func(*corev1.PodSpec)) corev1.PodSpec {
		spec := corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{
			{Name: "job", Image: "busybox", Command: []string{"/job"}},
			{Name: "proxy", Image: "busybox", Command: []string{"/proxy"}},
		}}
		change(&spec)
		return spec
	}
	for _, tc := range []struct {
		name string
		spec corev1.PodSpec
		err  string
	}{
		{"linux", pod(func(*corev1.PodSpec) {}), ""},
		{"spec.os.name windows", pod(func(s *corev1.PodSpec) { s.OS = &corev1.PodOS{Name: corev1.Windows} }),
			"spec.os.name is windows"},
		{"nodeSelector kubernetes.io/os windows", pod(func(s *corev1.PodSpec) { s.NodeSelector = map[string]string{corev1.LabelOSStable: "windows"} }),
			"kubernetes.io/os is windows"},
		{"pod-level requests with room", pod(func(s *corev1.PodSpec) {
			s.Resources = &corev1.ResourceRequirements{Requests: requests("500m", "256Mi"), Limits: requests("1", "512Mi")}
		}), ""},
		{"pod-level requests covering the containers, which request more than the install container", pod(func(s *corev1.PodSpec) {
			s.Containers[0].Resources.Requests = requests("200m", "64Mi")
			s.Resources = &corev1.ResourceRequirements{Requests: requests("200m", "64Mi")}
		}), ""},
		{"pod-level cpu below the install container's request", pod(func(s *corev1.PodSpec) {
			s.Resources = &corev1.ResourceRequirements{Requests: requests("5m", "256Mi")}
		}), "spec.resources.requests.cpu is 5m, less than the containers request together with the job-signal-install init container (10m): raise it to at least 10m"},
		{"pod-level memory below the install container's request", pod(func(s *corev1.PodSpec) {
			s.Containers[1].Resources.Requests = requests("", "4Mi")
			s.Resources = &corev1.ResourceRequirements{Requests: requests("", "8Mi")}
		}), "spec.resources.requests.memory is 8Mi, less than the containers request together with the job-signal-install init container (16Mi)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := injectSpec(tc.spec, nil, nil)
			if !matches(err, tc.err) {
				t.Errorf("%v, want %q", err, tc.err)
			}
			if err == nil && len(res.Spec.InitContainers) != 1 {
				t.Errorf("not injected: %+v", res.Spec.InitContainers)
			}
		})
	}
}

func matches(err error, want string) bool {
	if want == "" {
		return err == nil
	}
	return err != nil && strings.Contains(err.Error(), want)
}

// TestHandWired: a Pod with job-signal added by hand is told apart from
// one Inject made and from a plain one.
func TestHandWired(t *testing.T) {
	plain := corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "job", Command: []string{"/job"}}, {Name: "proxy", Command: []string{"/proxy"}}}}
	injected, err := injectSpec(plain, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	byHand := *injected.Spec.DeepCopy()
	onlyWrapped := *plain.DeepCopy()
	onlyWrapped.Containers[0].Command = []string{inject.JobSignalPath, "--", "/job"}
	onlyVolume := *plain.DeepCopy()
	onlyVolume.Volumes = []corev1.Volume{{Name: inject.StateVolume}}
	for _, tc := range []struct {
		name        string
		spec        corev1.PodSpec
		annotations map[string]string
		want        bool
	}{
		{"plain", plain, nil, false},
		{"injected by inject", injected.Spec, injected.Annotations, false},
		{"the same without the record", byHand, nil, true},
		{"a container runs job-signal", onlyWrapped, nil, true},
		{"the state volume", onlyVolume, nil, true},
	} {
		if got := inject.HandWired(&tc.spec, tc.annotations); got != tc.want {
			t.Errorf("%s: HandWired = %v", tc.name, got)
		}
	}
}
