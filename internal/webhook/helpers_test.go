package webhook_test

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// jobPod is a Pod as the Job controller creates it; its first container
// is the job (kubectl's default-container annotation says so).
func jobPod(containers ...corev1.Container) *corev1.Pod {
	var annotations map[string]string
	if len(containers) > 0 {
		annotations = map[string]string{"kubectl.kubernetes.io/default-container": containers[0].Name}
	}
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{GenerateName: "export-", Namespace: "jobs", Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "export", UID: "u1"}}},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: containers},
	}
}

func container(name string, command ...string) corev1.Container {
	return corev1.Container{Name: name, Image: "busybox:1.37", Command: command}
}
