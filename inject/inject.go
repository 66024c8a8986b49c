package inject

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// Input is what Inject transforms.
type Input struct {
	Spec        corev1.PodSpec
	Annotations map[string]string
	// Images holds the ENTRYPOINT and CMD of the images that Needs lists,
	// keyed by the image reference as the container writes it.
	Images map[string]ImageConfig
	// Installer is the image of the init container (required: the front
	// ends pass the release's image, or the one their user chose).
	Installer string
}

// Result is a transformed Pod template.
type Result struct {
	Spec        corev1.PodSpec
	Annotations map[string]string
	// Warnings are worth telling the user but do not stop the injection.
	Warnings []string
}

// Need is a container whose command line comes from its image.
type Need struct {
	Container string
	Image     string
}

// Injected reports whether annotations carry Inject's record.
func Injected(annotations map[string]string) bool {
	_, ok := annotations[AnnotationInjected]
	return ok
}

// Needs lists the containers Inject will wrap whose image must be looked
// up (they have no command). A Pod injected before needs none: its
// wrapped command lines are kept.
func Needs(spec corev1.PodSpec, annotations map[string]string) ([]Need, error) {
	orig, ann, known, err := original(spec, annotations)
	if err == nil {
		err = admissible(&orig)
	}
	if err != nil {
		return nil, err
	}
	s, err := parseSettings(ann)
	if err != nil {
		return nil, err
	}
	p, err := makePlan(&orig, s)
	if err != nil {
		return nil, err
	}
	var needs []Need
	for _, c := range orig.Containers {
		if p.roles[c.Name] != roleIgnored && known[c.Name] == nil && NeedsImage(&c) {
			needs = append(needs, Need{Container: c.Name, Image: c.Image})
		}
	}
	return needs, nil
}

// Inject adds job-signal to the Pod template. Injecting an injected Pod
// gives the same result, updated to its current annotations.
func Inject(in Input) (Result, error) {
	orig, ann, known, err := original(in.Spec, in.Annotations)
	if err != nil {
		return Result{}, err
	}
	s, err := parseSettings(ann)
	if err != nil {
		return Result{}, err
	}
	p, err := makePlan(&orig, s)
	if err != nil {
		return Result{}, err
	}
	if err := checkClashes(&orig, p); err != nil {
		return Result{}, err
	}
	if in.Installer == "" {
		return Result{}, errors.New("inject: Input.Installer is empty: name the job-signal image of the install init container")
	}
	installer := in.Installer
	out := *orig.DeepCopy()
	rec := record{Version: recordVersion, NoVolumes: out.Volumes == nil, NoInit: out.InitContainers == nil}
	for i := range out.Containers {
		c := &out.Containers[i]
		var command []string
		switch p.roles[c.Name] {
		case roleIgnored:
			continue
		case roleMain:
			command = append(append([]string{JobSignalPath}, p.mainFlags...), "--")
		default:
			command = append(append([]string{SidecarWatchPath}, p.sidecarFlags[c.Name]...), "--")
		}
		line := known[c.Name]
		if line == nil {
			var img *ImageConfig
			if cfg, ok := in.Images[c.Image]; ok {
				img = &cfg
			}
			if line, err = Effective(c, img); err != nil {
				return Result{}, fmt.Errorf("container %q (image %s): %w", c.Name, c.Image, err)
			}
		}
		cr := containerRecord{Name: c.Name, Command: c.Command, Args: c.Args, NoMounts: c.VolumeMounts == nil}
		c.Command, c.Args = command, line
		c.VolumeMounts = append(c.VolumeMounts, wrappedMounts()...)
		cr.Sum = commandSum(c)
		rec.Containers = append(rec.Containers, cr)
	}
	out.InitContainers = append([]corev1.Container{installContainer(installer)}, out.InitContainers...)
	out.Volumes = append(out.Volumes, stateVolume(), binVolume())
	annotations := maps.Clone(ann)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[AnnotationInjected] = rec.encode()
	if err := admissible(&out); err != nil {
		return Result{}, err
	}
	return Result{Spec: out, Annotations: annotations, Warnings: p.warnings}, nil
}

// checkClashes refuses a Pod that already uses the names or paths the
// layout adds: Uninject finds what Inject added by those names.
func checkClashes(spec *corev1.PodSpec, p plan) error {
	hint := "; if job-signal was added by hand, `kubectl job-signal uninject` turns it into annotations"
	for _, v := range spec.Volumes {
		if v.Name == StateVolume || v.Name == BinVolume {
			return fmt.Errorf("spec.volumes already has a volume named %q%s", v.Name, hint)
		}
	}
	for _, list := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for _, c := range list {
			if c.Name == InitContainer {
				return fmt.Errorf("a container is already named %q%s", c.Name, hint)
			}
		}
	}
	for _, c := range spec.Containers {
		if p.roles[c.Name] == roleIgnored {
			continue
		}
		for _, m := range c.VolumeMounts {
			if m.MountPath == StateDir || m.MountPath == BinDir || m.Name == StateVolume || m.Name == BinVolume {
				return fmt.Errorf("container %q already mounts %s at %s%s", c.Name, m.Name, m.MountPath, hint)
			}
		}
		if slices.Contains([]string{JobSignalPath, SidecarWatchPath}, first(c.Command)) {
			return fmt.Errorf("container %q already runs %s%s", c.Name, c.Command[0], hint)
		}
	}
	return nil
}

func first(list []string) string {
	if len(list) == 0 {
		return ""
	}
	return list[0]
}
