package inject

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestFieldIndex(t *testing.T) {
	for _, tc := range []struct {
		keys []string
		key  string
		want int
	}{
		{[]string{"name", "image", "args"}, "command", 2},
		{[]string{"name", "image", "workingDir"}, "command", 2},
		{[]string{"image", "name", "env"}, "command", 1},
		{[]string{"name", "env", "image"}, "command", 3},
		{[]string{"env", "ports"}, "command", 2},
		{[]string{"name", "image", "command", "env"}, "args", 3},
		{[]string{"workingDir", "name", "command"}, "args", 0},
		{[]string{"restartPolicy", "containers", "volumes"}, "initContainers", 1},
		{[]string{"apiVersion", "kind", "spec"}, "metadata", 2},
		{[]string{"containers"}, "volumes", 1},
		{nil, "command", 0},
		{[]string{"name", "image", "command", "volumeMounts"}, "restartPolicy", 3},
		{[]string{"name", "image", "env", "resources"}, "restartPolicy", 4},
		{[]string{"name", "readinessProbe", "securityContext"}, "startupProbe", 2},
		{[]string{"image", "name", "ports"}, "startupProbe", 3},
		{[]string{"name", "startupProbe", "restartPolicy", "imagePullPolicy"}, "lifecycle", 3},
		{[]string{"postStart"}, "preStop", 1},
		{[]string{"stopSignal", "postStart"}, "preStop", 0},
	} {
		if got := FieldIndex(tc.keys, tc.key); got != tc.want {
			t.Errorf("FieldIndex(%q, %q) = %d, want %d", tc.keys, tc.key, got, tc.want)
		}
	}
}

// TestContainerFields: the order FieldIndex places a container's new
// members in is corev1.Container's.
func TestContainerFields(t *testing.T) {
	var names []string
	typ := reflect.TypeFor[corev1.Container]()
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		names = append(names, name)
	}
	if !slices.Equal(names, containerFields) {
		t.Errorf("corev1.Container's fields are %q, containerFields %q", names, containerFields)
	}
}
