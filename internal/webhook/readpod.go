package webhook

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"
)

// readPod reads, as the API server reads it, the part of a Pod the webhook
// looks at itself before inject: all of its metadata, and of its spec the
// containers' names and commands, the init containers' names and restart
// policies, the volumes' names, the restart policy, the pull secrets and
// the node selector. inject reads the whole spec again, strictly, and
// fitOps the whole Pod where a LimitRange needs it: decoding all of it
// here as well took a sixth of the webhook's CPU per Pod.
func readPod(raw []byte) (*corev1.Pod, error) {
	type named struct {
		Name          string                         `json:"name"`
		Command       []string                       `json:"command,omitempty"`
		RestartPolicy *corev1.ContainerRestartPolicy `json:"restartPolicy,omitempty"`
	}
	var p struct {
		metav1.TypeMeta `json:",inline"`
		Metadata        metav1.ObjectMeta `json:"metadata"`
		Spec            struct {
			Containers       []named                       `json:"containers"`
			InitContainers   []named                       `json:"initContainers"`
			Volumes          []struct{ Name string }       `json:"volumes"`
			RestartPolicy    corev1.RestartPolicy          `json:"restartPolicy"`
			ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets"`
			NodeSelector     map[string]string             `json:"nodeSelector"`
		} `json:"spec"`
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, &p); err != nil {
		return nil, err
	}
	pod := &corev1.Pod{TypeMeta: p.TypeMeta, ObjectMeta: p.Metadata}
	s := &pod.Spec
	s.RestartPolicy, s.ImagePullSecrets, s.NodeSelector = p.Spec.RestartPolicy, p.Spec.ImagePullSecrets, p.Spec.NodeSelector
	copyNamed := func(from []named) []corev1.Container {
		if from == nil {
			return nil
		}
		out := make([]corev1.Container, len(from))
		for i, c := range from {
			out[i] = corev1.Container{Name: c.Name, Command: c.Command, RestartPolicy: c.RestartPolicy}
		}
		return out
	}
	s.Containers, s.InitContainers = copyNamed(p.Spec.Containers), copyNamed(p.Spec.InitContainers)
	for _, v := range p.Spec.Volumes {
		s.Volumes = append(s.Volumes, corev1.Volume{Name: v.Name})
	}
	return pod, nil
}
