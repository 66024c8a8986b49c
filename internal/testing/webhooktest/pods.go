package webhooktest

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
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

// AppJobPod is a Pod as the Job controller creates it from a template an
// application's chart would write: the controller's labels, owner and
// finalizer, the chart's labels and annotations; a main container with
// its environment, resources, mounts and security context, and a proxy
// sidecar with flags, a port and a readiness probe, every command given.
// The API server adds its defaults, the ServiceAccount's token volume and
// tolerations before the webhook sees it: APIServerAppJobPod.
func AppJobPod(name string) *corev1.Pod {
	uid := types.UID("3f0c6a52-7d1e-4b8a-9c1e-5a2b7d9e0f14")
	env := []corev1.EnvVar{
		{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
		{Name: "DATABASE_HOST", Value: "127.0.0.1"}, {Name: "DATABASE_PORT", Value: "5432"}, {Name: "DATABASE_NAME", Value: "orders"},
		{Name: "EXPORT_BUCKET", Value: "gs://example-exports/daily"}, {Name: "LOG_LEVEL", Value: "info"}, {Name: "LOG_FORMAT", Value: "json"},
		{Name: "GOMAXPROCS", Value: "2"}, {Name: "BATCH_SIZE", Value: "500"},
	}
	resources := func(cpu, memory string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(memory)},
		}
	}
	restricted := &corev1.SecurityContext{AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
		Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels: map[string]string{"batch.kubernetes.io/controller-uid": string(uid), "batch.kubernetes.io/job-name": "orders-export-29211840",
				"controller-uid": string(uid), "job-name": "orders-export-29211840", "app.kubernetes.io/name": "orders-export",
				"app.kubernetes.io/instance": "orders", "app.kubernetes.io/component": "export", "app.kubernetes.io/part-of": "orders",
				"app.kubernetes.io/managed-by": "Helm", "helm.sh/chart": "orders-1.14.2"},
			Annotations: map[string]string{"kubectl.kubernetes.io/default-container": "export",
				"checksum/config": "9c1e5a2b7d9e0f143f0c6a527d1e4b8a9c1e5a2b7d9e0f143f0c6a527d1e4b8a"},
			Finalizers: []string{"batch.kubernetes.io/job-tracking"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "orders-export-29211840", UID: uid,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: ptr.To(int64(30)),
			SecurityContext:               &corev1.PodSecurityContext{FSGroup: ptr.To(int64(2000)), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Containers: []corev1.Container{
				{Name: "export", Image: "busybox:1.37", Command: []string{"sh", "-c", "export --since=24h"},
					Args: []string{"--since=24h", "--format=parquet"}, WorkingDir: "/work", Env: env, Resources: resources("250m", "512Mi"),
					VolumeMounts:    []corev1.VolumeMount{{Name: "work", MountPath: "/work"}, {Name: "config", MountPath: "/etc/orders", ReadOnly: true}},
					SecurityContext: restricted},
				{Name: "db-proxy", Image: "busybox:1.37", Command: []string{"sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait"},
					Args:  []string{"--port=5432", "--address=127.0.0.1", "--structured-logs", "--max-connections=16", "example:europe-west1:orders"},
					Ports: []corev1.ContainerPort{{Name: "postgres", ContainerPort: 5432}}, Resources: resources("50m", "64Mi"),
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(5432)}},
						PeriodSeconds: 2, FailureThreshold: 30},
					SecurityContext: restricted},
			},
			Volumes: []corev1.Volume{{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "orders-export"}}}}},
		},
	}
}

// APIServerAppJobPod is AppJobPod as the API server sends it on its
// first call: defaults filled in, the ServiceAccount's token mounted into
// every container, tolerations added, and the record of which client set
// which field (managedFields), here the Job controller's.
func APIServerAppJobPod() *corev1.Pod {
	p := AppJobPod("")
	p.GenerateName, p.Namespace = "orders-export-29211840-", "orders"
	for i := range p.Spec.Containers {
		c := &p.Spec.Containers[i]
		c.VolumeMounts = append(c.VolumeMounts, TokenMount)
		c.TerminationMessagePath, c.TerminationMessagePolicy = "/dev/termination-log", corev1.TerminationMessageReadFile
		c.ImagePullPolicy = corev1.PullIfNotPresent
	}
	c := &p.Spec.Containers[1].Ports[0]
	c.Protocol = corev1.ProtocolTCP
	probe := p.Spec.Containers[1].ReadinessProbe
	probe.TimeoutSeconds, probe.SuccessThreshold = 1, 1
	p.Spec.Volumes[1].ConfigMap.DefaultMode = ptr.To(int32(420))
	api := APIServerPod()
	p.Spec.Volumes = append(p.Spec.Volumes, api.Spec.Volumes...)
	p.Spec.Tolerations = api.Spec.Tolerations
	p.Spec.DNSPolicy, p.Spec.SchedulerName, p.Spec.ServiceAccountName = corev1.DNSClusterFirst, "default-scheduler", "default"
	p.Spec.Priority, p.Spec.EnableServiceLinks, p.Spec.PreemptionPolicy = ptr.To(int32(0)), ptr.To(true), ptr.To(corev1.PreemptLowerPriority)
	p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate,
		APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(appJobPodFields)}}}
	return p
}

// appJobPodFields is the managedFields entry the API server keeps for the
// fields of AppJobPod the Job controller set.
const appJobPodFields = `{"f:metadata":{"f:annotations":{".":{},"f:checksum/config":{},"f:kubectl.kubernetes.io/default-container":{}},` +
	`"f:finalizers":{".":{},"v:\"batch.kubernetes.io/job-tracking\"":{}},"f:labels":{".":{},"f:app.kubernetes.io/component":{},` +
	`"f:app.kubernetes.io/instance":{},"f:app.kubernetes.io/managed-by":{},"f:app.kubernetes.io/name":{},"f:app.kubernetes.io/part-of":{},` +
	`"f:batch.kubernetes.io/controller-uid":{},"f:batch.kubernetes.io/job-name":{},"f:controller-uid":{},"f:helm.sh/chart":{},"f:job-name":{}},` +
	`"f:ownerReferences":{".":{},"k:{\"uid\":\"3f0c6a52-7d1e-4b8a-9c1e-5a2b7d9e0f14\"}":{}}},"f:spec":{"f:containers":{` +
	`"k:{\"name\":\"db-proxy\"}":{".":{},"f:args":{},"f:command":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:ports":{".":{},` +
	`"k:{\"containerPort\":5432,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:name":{},"f:protocol":{}}},"f:readinessProbe":{".":{},` +
	`"f:failureThreshold":{},"f:periodSeconds":{},"f:successThreshold":{},"f:tcpSocket":{".":{},"f:port":{}},"f:timeoutSeconds":{}},` +
	`"f:resources":{".":{},"f:limits":{".":{},"f:memory":{}},"f:requests":{".":{},"f:cpu":{},"f:memory":{}}},"f:securityContext":{".":{},` +
	`"f:allowPrivilegeEscalation":{},"f:capabilities":{".":{},"f:drop":{}},"f:readOnlyRootFilesystem":{}},"f:terminationMessagePath":{},` +
	`"f:terminationMessagePolicy":{}},"k:{\"name\":\"export\"}":{".":{},"f:args":{},"f:command":{},"f:env":{".":{},` +
	`"k:{\"name\":\"BATCH_SIZE\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"DATABASE_HOST\"}":{".":{},"f:name":{},"f:value":{}},` +
	`"k:{\"name\":\"DATABASE_NAME\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"DATABASE_PORT\"}":{".":{},"f:name":{},"f:value":{}},` +
	`"k:{\"name\":\"EXPORT_BUCKET\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"GOMAXPROCS\"}":{".":{},"f:name":{},"f:value":{}},` +
	`"k:{\"name\":\"LOG_FORMAT\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"LOG_LEVEL\"}":{".":{},"f:name":{},"f:value":{}},` +
	`"k:{\"name\":\"POD_NAME\"}":{".":{},"f:name":{},"f:valueFrom":{".":{},"f:fieldRef":{}}},"k:{\"name\":\"POD_NAMESPACE\"}":{".":{},` +
	`"f:name":{},"f:valueFrom":{".":{},"f:fieldRef":{}}}},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:resources":{".":{},` +
	`"f:limits":{".":{},"f:memory":{}},"f:requests":{".":{},"f:cpu":{},"f:memory":{}}},"f:securityContext":{".":{},"f:allowPrivilegeEscalation":{},` +
	`"f:capabilities":{".":{},"f:drop":{}},"f:readOnlyRootFilesystem":{}},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{},` +
	`"f:volumeMounts":{".":{},"k:{\"mountPath\":\"/etc/orders\"}":{".":{},"f:mountPath":{},"f:name":{},"f:readOnly":{}},` +
	`"k:{\"mountPath\":\"/work\"}":{".":{},"f:mountPath":{},"f:name":{}}},"f:workingDir":{}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},` +
	`"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{".":{},"f:fsGroup":{},"f:seccompProfile":{".":{},"f:type":{}}},` +
	`"f:terminationGracePeriodSeconds":{},"f:volumes":{".":{},"k:{\"name\":\"config\"}":{".":{},"f:configMap":{".":{},"f:defaultMode":{},` +
	`"f:name":{}},"f:name":{}},"k:{\"name\":\"work\"}":{".":{},"f:emptyDir":{},"f:name":{}}}}}`
