package webhook

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/job-signal/job-signal/inject"
)

// readPod decodes a Pod's JSON once (inject.Parse, the decoding inject
// prepares it from), unless parsed is that already, and reads from it the part the webhook looks at
// itself before inject: of its metadata the names, labels, annotations
// and owners, and of its spec the containers' names, commands and restart
// policies, the init containers' too, the volumes' names, the restart
// policy, the pull secrets and the node selector. A field of another type
// than the API's is an error, as decoding into the API's types makes it.
func readPod(raw []byte, parsed inject.Parsed) (*corev1.Pod, inject.Parsed, error) {
	if parsed.Object == nil {
		var err error
		if parsed, err = inject.Parse(raw); err != nil {
			return nil, parsed, err
		}
	}
	obj := parsed.Object
	var r podReader
	pod := &corev1.Pod{}
	meta := r.object(obj, "metadata")
	pod.APIVersion, pod.Kind = r.str(obj, "apiVersion"), r.str(obj, "kind")
	pod.Name, pod.GenerateName, pod.Namespace = r.str(meta, "name"), r.str(meta, "generateName"), r.str(meta, "namespace")
	pod.UID = types.UID(r.str(meta, "uid"))
	pod.Labels, pod.Annotations = r.strings(meta, "labels"), r.strings(meta, "annotations")
	for _, o := range r.objects(meta, "ownerReferences") {
		pod.OwnerReferences = append(pod.OwnerReferences, metav1.OwnerReference{
			APIVersion: r.str(o, "apiVersion"), Kind: r.str(o, "kind"), Name: r.str(o, "name"), UID: types.UID(r.str(o, "uid"))})
	}
	spec := r.object(obj, "spec")
	s := &pod.Spec
	s.RestartPolicy, s.NodeSelector = corev1.RestartPolicy(r.str(spec, "restartPolicy")), r.strings(spec, "nodeSelector")
	containers := func(key string) []corev1.Container {
		list := r.objects(spec, key)
		if list == nil {
			return nil
		}
		out := make([]corev1.Container, len(list))
		for i, c := range list {
			out[i] = corev1.Container{Name: r.str(c, "name"), Command: r.list(c, "command")}
			if p, ok := c["restartPolicy"]; ok && p != nil {
				policy := corev1.ContainerRestartPolicy(r.str(c, "restartPolicy"))
				out[i].RestartPolicy = &policy
			}
		}
		return out
	}
	s.Containers, s.InitContainers = containers("containers"), containers("initContainers")
	for _, v := range r.objects(spec, "volumes") {
		s.Volumes = append(s.Volumes, corev1.Volume{Name: r.str(v, "name")})
	}
	for _, ref := range r.objects(spec, "imagePullSecrets") {
		s.ImagePullSecrets = append(s.ImagePullSecrets, corev1.LocalObjectReference{Name: r.str(ref, "name")})
	}
	if r.err != nil {
		return nil, inject.Parsed{}, r.err
	}
	return pod, parsed, nil
}

// podReader reads members of a decoded object by the API's types: null
// or absent is the zero value; another type is its first error.
type podReader struct{ err error }

func (r *podReader) wrong(key, want string, v any) {
	if r.err == nil {
		r.err = fmt.Errorf("%s is %T, not %s", key, v, want)
	}
}

func (r *podReader) str(o map[string]any, key string) string {
	switch v := o[key].(type) {
	case nil:
	case string:
		return v
	default:
		r.wrong(key, "a string", v)
	}
	return ""
}

func (r *podReader) object(o map[string]any, key string) map[string]any {
	switch v := o[key].(type) {
	case nil:
	case map[string]any:
		return v
	default:
		r.wrong(key, "an object", v)
	}
	return nil
}

func (r *podReader) strings(o map[string]any, key string) map[string]string {
	m := r.object(o, key)
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		s, ok := v.(string)
		if !ok && v != nil {
			r.wrong(key+"."+k, "a string", v)
		}
		out[k] = s
	}
	return out
}

func (r *podReader) array(o map[string]any, key string) []any {
	switch v := o[key].(type) {
	case nil:
	case []any:
		return v
	default:
		r.wrong(key, "an array", v)
	}
	return nil
}

func (r *podReader) objects(o map[string]any, key string) []map[string]any {
	a := r.array(o, key)
	if a == nil {
		return nil
	}
	out := make([]map[string]any, len(a))
	for i, e := range a {
		switch e := e.(type) {
		case nil:
			out[i] = map[string]any{}
		case map[string]any:
			out[i] = e
		default:
			r.wrong(fmt.Sprintf("%s[%d]", key, i), "an object", e)
			out[i] = map[string]any{}
		}
	}
	return out
}

func (r *podReader) list(o map[string]any, key string) []string {
	a := r.array(o, key)
	if a == nil {
		return nil
	}
	out := make([]string, len(a))
	for i, e := range a {
		s, ok := e.(string)
		if !ok && e != nil {
			r.wrong(fmt.Sprintf("%s[%d]", key, i), "a string", e)
		}
		out[i] = s
	}
	return out
}
