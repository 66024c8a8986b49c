package inject

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// Uninject undoes Inject exactly, from its record. A Pod that has
// job-signal added by hand (no record) is unwrapped instead: the flags
// become annotations, so that injecting it again gives the same Pod. A Pod
// without job-signal is returned unchanged.
func Uninject(spec corev1.PodSpec, annotations map[string]string) (Result, error) {
	if Injected(annotations) {
		orig, ann, _, err := original(spec, annotations)
		return Result{Spec: orig, Annotations: ann}, err
	}
	return unwrap(spec, annotations)
}

// original undoes Inject when annotations carry its record; known holds
// the command line (args) each wrapped container had, by name. Without a
// record it returns copies of its input and no known lines.
func original(spec corev1.PodSpec, annotations map[string]string) (corev1.PodSpec, map[string]string, map[string][]string, error) {
	out := *spec.DeepCopy()
	ann := maps.Clone(annotations)
	text, ok := annotations[AnnotationInjected]
	if !ok {
		return out, ann, nil, nil
	}
	rec, err := decodeRecord(text)
	if err != nil {
		return out, ann, nil, err
	}
	var found bool
	if out.InitContainers, found = removeContainer(out.InitContainers, InitContainer); !found {
		return out, ann, nil, fmt.Errorf("annotation %s is set but spec.initContainers has no %q: the Pod was edited after injection", AnnotationInjected, InitContainer)
	}
	for _, name := range []string{StateVolume, BinVolume} {
		if out.Volumes, found = removeVolume(out.Volumes, name); !found {
			return out, ann, nil, fmt.Errorf("annotation %s is set but spec.volumes has no %q: the Pod was edited after injection", AnnotationInjected, name)
		}
	}
	if rec.NoInit && len(out.InitContainers) == 0 {
		out.InitContainers = nil
	}
	if rec.NoVolumes && len(out.Volumes) == 0 {
		out.Volumes = nil
	}
	known := map[string][]string{}
	for _, cr := range rec.Containers {
		i := slices.IndexFunc(out.Containers, func(c corev1.Container) bool { return c.Name == cr.Name })
		if i < 0 {
			return out, ann, nil, fmt.Errorf("annotation %s names container %q, which the Pod no longer has", AnnotationInjected, cr.Name)
		}
		c := &out.Containers[i]
		if commandSum(c) != cr.Sum {
			return out, ann, nil, fmt.Errorf("container %q: command or args changed after injection; undoing the injection would lose that change: edit the source and inject again", c.Name)
		}
		known[c.Name] = c.Args
		c.Command, c.Args = cr.Command, cr.Args
		c.VolumeMounts = slices.DeleteFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool {
			return m.Name == StateVolume || m.Name == BinVolume
		})
		if cr.NoMounts && len(c.VolumeMounts) == 0 {
			c.VolumeMounts = nil
		}
	}
	delete(ann, AnnotationInjected)
	if len(ann) == 0 {
		ann = nil
	}
	return out, ann, known, nil
}

func removeContainer(list []corev1.Container, name string) ([]corev1.Container, bool) {
	n := len(list)
	list = slices.DeleteFunc(list, func(c corev1.Container) bool { return c.Name == name })
	return list, len(list) < n
}

func removeVolume(list []corev1.Volume, name string) ([]corev1.Volume, bool) {
	n := len(list)
	list = slices.DeleteFunc(list, func(v corev1.Volume) bool { return v.Name == name })
	return list, len(list) < n
}
