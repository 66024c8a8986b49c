package inject

import "slices"

// fieldsBefore and fieldsAfter are Kubernetes' own field order, as
// kubectl get and the API reference write objects, for the members
// Inject adds: a new member goes before the first of fieldsBefore that
// is there, else after the first of fieldsAfter that is there.
var (
	fieldsBefore = map[string][]string{"command": {"args", "workingDir"}, "args": {"workingDir"}, "initContainers": {"containers"}, "metadata": {"spec"},
		// The native form's additions to a container, and to its lifecycle.
		"restartPolicy": {"restartPolicyRules", "volumeMounts", "volumeDevices", "livenessProbe", "readinessProbe", "startupProbe", "lifecycle",
			"terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy", "securityContext", "stdin", "stdinOnce", "tty"},
		"startupProbe": {"lifecycle", "terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy", "securityContext", "stdin", "stdinOnce", "tty"},
		"lifecycle":    {"terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy", "securityContext", "stdin", "stdinOnce", "tty"},
		"preStop":      {"stopSignal"},
	}
	fieldsAfter = map[string][]string{"command": {"image", "name"}, "args": {"command", "image", "name"},
		"restartPolicy": containerBefore("restartPolicy"), "startupProbe": containerBefore("startupProbe"), "lifecycle": containerBefore("lifecycle"),
		"preStop": {"postStart"},
	}
)

// containerFields are a container's members in Kubernetes' order (the
// fields of corev1.Container).
var containerFields = []string{"name", "image", "command", "args", "workingDir", "ports", "envFrom", "env", "resources", "resizePolicy",
	"restartPolicy", "restartPolicyRules", "volumeMounts", "volumeDevices", "livenessProbe", "readinessProbe", "startupProbe", "lifecycle",
	"terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy", "securityContext", "stdin", "stdinOnce", "tty"}

// containerBefore lists the container's members before key, nearest first.
func containerBefore(key string) []string {
	before := slices.Clone(containerFields[:slices.Index(containerFields, key)])
	slices.Reverse(before)
	return before
}

// FieldIndex is where a person puts the new member key among the members
// keys of an object, in their order: the index to insert it at. A front
// end that writes source text puts Inject's additions there; the others
// go last.
func FieldIndex(keys []string, key string) int {
	for _, b := range fieldsBefore[key] {
		if i := slices.Index(keys, b); i >= 0 {
			return i
		}
	}
	for _, a := range fieldsAfter[key] {
		if i := slices.Index(keys, a); i >= 0 {
			return i + 1
		}
	}
	return len(keys)
}
