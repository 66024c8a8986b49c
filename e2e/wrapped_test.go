//go:build e2e

package e2e

import (
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// wrapped describes a test Job laid out as docs/layout.md says (what manifests/,
// `kubectl job-signal inject` and the webhook produce): the state and
// binaries volumes, the install init container, the main container under
// job-signal and each sidecar under sidecar-watch, all non-root on
// read-only root filesystems.
type wrapped struct {
	name          string
	grace         int64    // terminationGracePeriodSeconds; 10 if 0
	main          []string // the main container's own command
	mainFlags     []string // job-signal flags besides --wait-for
	mainLimits    corev1.ResourceList
	sidecars      []sidecar
	restartPolicy corev1.RestartPolicy // Never if empty
	volumes       []corev1.Volume      // more volumes, mounted in every container at /NAME
}

type sidecar struct {
	name    string
	image   string   // busybox if empty
	flags   []string // sidecar-watch flags besides --name
	command []string
}

// A sidecar that stops at once on SIGTERM: "sleep & wait" lets the trap run
// as soon as the signal comes (as PID 1, sleep alone would ignore it).
const termSidecar = `trap 'echo sidecar stopping; exit 0' TERM; echo sidecar up; sleep 3600 & wait`

// A main command that works a little; its last line marks the moment it ends.
const shortMain = `echo main working; sleep 2; echo main done`

func oneSidecar(name, main string) wrapped {
	return wrapped{name: name, main: []string{"sh", "-c", main},
		sidecars: []sidecar{{name: "sidecar", command: []string{"sh", "-c", termSidecar}}}}
}

func restricted() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		ReadOnlyRootFilesystem:   ptr.To(true),
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

func (w wrapped) mounts() []corev1.VolumeMount {
	m := []corev1.VolumeMount{
		{Name: "job-signal", MountPath: stateDir},
		{Name: "job-signal-bin", MountPath: binDir, ReadOnly: true},
	}
	for _, v := range w.volumes {
		m = append(m, corev1.VolumeMount{Name: v.Name, MountPath: "/" + v.Name})
	}
	return m
}

func (w wrapped) container(name string, command, args []string) corev1.Container {
	return corev1.Container{Name: name, Image: busyboxImage, ImagePullPolicy: kube.PullPolicy(),
		Command: command, Args: args, VolumeMounts: w.mounts(), SecurityContext: restricted()}
}

func (w wrapped) podSpec() corev1.PodSpec {
	grace := w.grace
	if grace == 0 {
		grace = 10
	}
	policy := w.restartPolicy
	if policy == "" {
		policy = corev1.RestartPolicyNever
	}
	var names []string
	for _, s := range w.sidecars {
		names = append(names, s.name)
	}
	mainCmd := []string{binDir + "/job-signal"}
	if len(names) > 0 {
		mainCmd = append(mainCmd, "--wait-for="+strings.Join(names, ","))
	}
	mainCmd = append(append(mainCmd, w.mainFlags...), "--")
	main := w.container("main", mainCmd, w.main)
	if w.mainLimits != nil {
		main.Resources.Limits = w.mainLimits
	}
	containers := []corev1.Container{main}
	for _, s := range w.sidecars {
		cmd := append(append([]string{binDir + "/sidecar-watch", "--name=" + s.name}, s.flags...), "--")
		c := w.container(s.name, cmd, s.command)
		if s.image != "" {
			c.Image = s.image
		}
		containers = append(containers, c)
	}
	install := corev1.Container{
		Name: "job-signal-install", Image: productImage, ImagePullPolicy: kube.PullPolicy(),
		Command:         []string{"/usr/local/bin/job-signal", "install", binDir},
		VolumeMounts:    []corev1.VolumeMount{{Name: "job-signal-bin", MountPath: binDir}},
		SecurityContext: restricted(),
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
		},
	}
	memory := func(name, size string) corev1.Volume {
		q := resource.MustParse(size)
		return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
			EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: &q}}}
	}
	return corev1.PodSpec{
		RestartPolicy:                 policy,
		TerminationGracePeriodSeconds: ptr.To(grace),
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To(int64(65532)), RunAsGroup: ptr.To(int64(65532)),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Volumes:        append([]corev1.Volume{memory("job-signal", "1Mi"), memory("job-signal-bin", "32Mi")}, w.volumes...),
		InitContainers: []corev1.Container{install},
		Containers:     containers,
	}
}

// job is the Job around the Pod, with backoffLimit 0 unless changed.
func (w wrapped) job() *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: w.name},
		Spec: batchv1.JobSpec{
			BackoffLimit: ptr.To(int32(0)),
			Template:     corev1.PodTemplateSpec{Spec: w.podSpec()},
		},
	}
}
