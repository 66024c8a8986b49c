package inject

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The layout decided for the project (docs/layout.md): names and paths that the
// manifests, the kustomize component, the CLI and the webhook share.
const (
	StateVolume   = "job-signal"
	StateDir      = "/var/run/job-signal" // job-signal's and sidecar-watch's default --dir
	BinVolume     = "job-signal-bin"
	BinDir        = "/var/run/job-signal-bin"
	InitContainer = "job-signal-install"

	JobSignalPath    = BinDir + "/job-signal"
	SidecarWatchPath = BinDir + "/sidecar-watch"

	// installerPath is where the image keeps job-signal.
	installerPath = "/usr/local/bin/job-signal"
	nonRootID     = 65532
)

// stateVolume and binVolume are the two emptyDir volumes. Memory keeps the
// markers off the node's disk; the limits are far above what each holds.
func stateVolume() corev1.Volume {
	return memoryVolume(StateVolume, "1Mi")
}

func binVolume() corev1.Volume {
	return memoryVolume(BinVolume, "32Mi")
}

func memoryVolume(name, limit string) corev1.Volume {
	size := resource.MustParse(limit)
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
		EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: &size},
	}}
}

// installContainer copies both binaries into the bin volume. It is the only
// container that mounts that volume read-write.
func installContainer(image string) corev1.Container {
	no, yes := false, true
	id := int64(nonRootID)
	return corev1.Container{
		Name:         InitContainer,
		Image:        image,
		Command:      []string{installerPath, "install", BinDir},
		VolumeMounts: []corev1.VolumeMount{{Name: BinVolume, MountPath: BinDir}},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
		},
		SecurityContext: &corev1.SecurityContext{
			RunAsNonRoot:             &yes,
			RunAsUser:                &id,
			RunAsGroup:               &id,
			ReadOnlyRootFilesystem:   &yes,
			AllowPrivilegeEscalation: &no,
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
	}
}

// wrappedMounts are the mounts every wrapped container gets: the state
// directory read-write (markers), the binaries read-only.
func wrappedMounts() []corev1.VolumeMount {
	return []corev1.VolumeMount{
		{Name: StateVolume, MountPath: StateDir},
		{Name: BinVolume, MountPath: BinDir, ReadOnly: true},
	}
}
