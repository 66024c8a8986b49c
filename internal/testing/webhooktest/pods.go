package webhooktest

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TokenMount is where the ServiceAccount admission mounts the API token.
var TokenMount = corev1.VolumeMount{Name: "kube-api-access-x1y2z", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}

// APIServerPod is a Job's Pod with a sidecar, every command given, as the
// API server sends it on its first call: defaults filled in, the
// ServiceAccount's token mounted into every container, tolerations added.
func APIServerPod() *corev1.Pod {
	defaulted := func(name string, command ...string) corev1.Container {
		return corev1.Container{Name: name, Image: "busybox:1.37", Command: command, VolumeMounts: []corev1.VolumeMount{TokenMount},
			TerminationMessagePath: "/dev/termination-log", TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			ImagePullPolicy: corev1.PullIfNotPresent}
	}
	uid := "0b6f1c9e-3d1a-4c55-9a57-3c4bd9b7c2a1"
	p := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{GenerateName: "export-", Namespace: "jobs",
			Labels: map[string]string{"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": "export",
				"controller-uid": uid, "job-name": "export"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "export", UID: "u1",
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{defaulted("main", "sh", "-c", "echo main working; sleep 2; echo main done"),
				defaulted("sidecar", "sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait")},
			Volumes: []corev1.Volume{{Name: TokenMount.Name, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				DefaultMode: ptr.To(int32(420)), Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To(int64(3607))}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
						Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
				}}}}},
			DNSPolicy: corev1.DNSClusterFirst, SchedulerName: "default-scheduler", ServiceAccountName: "default",
			TerminationGracePeriodSeconds: ptr.To(int64(10)), EnableServiceLinks: ptr.To(true),
			SecurityContext: &corev1.PodSecurityContext{}, Priority: ptr.To(int32(0)), PreemptionPolicy: ptr.To(corev1.PreemptLowerPriority),
		},
	}
	for _, key := range []string{"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"} {
		p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists,
			Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(int64(300))})
	}
	return p
}

// CalledAgain is the Pod the API server sends on its second call, given
// the one it stored from the first (injected): the ServiceAccount
// admission, run again, has mounted the token into the install container.
func CalledAgain(injected *corev1.Pod) *corev1.Pod {
	p := injected.DeepCopy()
	for i := range p.Spec.InitContainers {
		c := &p.Spec.InitContainers[i]
		c.VolumeMounts = append(c.VolumeMounts, TokenMount)
		c.TerminationMessagePath, c.TerminationMessagePolicy = "/dev/termination-log", corev1.TerminationMessageReadFile
	}
	return p
}
