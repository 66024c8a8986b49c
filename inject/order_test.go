package inject

import "testing"

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
	} {
		if got := FieldIndex(tc.keys, tc.key); got != tc.want {
			t.Errorf("FieldIndex(%q, %q) = %d, want %d", tc.keys, tc.key, got, tc.want)
		}
	}
}
