package webhook

import (
	"reflect"

	corev1 "k8s.io/api/core/v1"
	kjson "sigs.k8s.io/json"
)

// Injection changes a Pod in few places: its annotations, init containers
// and volumes, and the command, args and mounts of its containers. When
// before and after differ only there, podPatch compares only those parts
// (a projection, with the same JSON paths as the Pod), so that a large
// Pod's bulk, its environment for one, is neither encoded nor decoded
// again: memory per request stays near the size of the request.

// podProjection is the part of a Pod injection changes, encoded as the
// Pod's own fields are.
type podProjection struct {
	Metadata struct {
		Annotations map[string]string `json:"annotations,omitempty"`
	} `json:"metadata"`
	Spec struct {
		InitContainers []corev1.Container    `json:"initContainers,omitempty"`
		Containers     []containerProjection `json:"containers"`
		Volumes        []corev1.Volume       `json:"volumes,omitempty"`
	} `json:"spec"`
}

type containerProjection struct {
	Command      []string             `json:"command,omitempty"`
	Args         []string             `json:"args,omitempty"`
	VolumeMounts []corev1.VolumeMount `json:"volumeMounts,omitempty"`
}

func projectionOf(pod *corev1.Pod) *podProjection {
	p := &podProjection{}
	p.Metadata.Annotations = pod.Annotations
	p.Spec.InitContainers, p.Spec.Volumes = pod.Spec.InitContainers, pod.Spec.Volumes
	p.Spec.Containers = make([]containerProjection, len(pod.Spec.Containers))
	for i, c := range pod.Spec.Containers {
		p.Spec.Containers[i] = containerProjection{c.Command, c.Args, c.VolumeMounts}
	}
	return p
}

// onlyProjected reports whether before and after differ only in what
// the projection holds. The comparison copies no strings.
func onlyProjected(before, after *corev1.Pod) bool {
	if len(before.Spec.Containers) != len(after.Spec.Containers) {
		return false
	}
	for i := range before.Spec.Containers {
		b, a := before.Spec.Containers[i], after.Spec.Containers[i]
		b.Command, b.Args, b.VolumeMounts = nil, nil, nil
		a.Command, a.Args, a.VolumeMounts = nil, nil, nil
		if !reflect.DeepEqual(b, a) {
			return false
		}
	}
	b, a := *before, *after
	b.Annotations, a.Annotations = nil, nil
	b.Spec.InitContainers, b.Spec.Containers, b.Spec.Volumes = nil, nil, nil
	a.Spec.InitContainers, a.Spec.Containers, a.Spec.Volumes = nil, nil, nil
	return reflect.DeepEqual(b, a)
}

// projectedRaw decodes, of raw, only what the projection holds: the rest
// is scanned, not kept. Absent parts stay absent, as Anchor needs, and
// keys match exactly, as in a JSON Patch (and the API server's decoder).
func projectedRaw(raw []byte) (any, error) {
	var pod struct {
		Metadata *struct {
			Annotations any `json:"annotations"`
		} `json:"metadata"`
		Spec *struct {
			InitContainers any `json:"initContainers"`
			Containers     []struct {
				Command      any `json:"command"`
				Args         any `json:"args"`
				VolumeMounts any `json:"volumeMounts"`
			} `json:"containers"`
			Volumes any `json:"volumes"`
		} `json:"spec"`
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, &pod); err != nil {
		return nil, err
	}
	doc := map[string]any{}
	set := func(m map[string]any, key string, v any) {
		if v != nil {
			m[key] = v
		}
	}
	if pod.Metadata != nil {
		meta := map[string]any{}
		set(meta, "annotations", pod.Metadata.Annotations)
		doc["metadata"] = meta
	}
	if pod.Spec != nil {
		spec := map[string]any{}
		set(spec, "initContainers", pod.Spec.InitContainers)
		set(spec, "volumes", pod.Spec.Volumes)
		var containers []any
		for _, c := range pod.Spec.Containers {
			m := map[string]any{}
			set(m, "command", c.Command)
			set(m, "args", c.Args)
			set(m, "volumeMounts", c.VolumeMounts)
			containers = append(containers, m)
		}
		set(spec, "containers", containers)
		doc["spec"] = spec
	}
	return doc, nil
}
