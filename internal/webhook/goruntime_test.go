package webhook

import "testing"

func TestRuntimeFor(t *testing.T) {
	ours := runtimeSettings{memoryLimit: softMemoryLimit, gcPercent: gcPercent, procs: procs}
	for _, c := range []struct {
		name string
		env  map[string]string
		want runtimeSettings
	}{
		{"nothing set: the webhook's own", nil, ours},
		{"GOMEMLIMIT: Go's collector, no limit of ours", map[string]string{"GOMEMLIMIT": "1GiB"}, runtimeSettings{procs: procs}},
		{"GOGC: our limit, their GOGC", map[string]string{"GOGC": "100"}, runtimeSettings{memoryLimit: softMemoryLimit, procs: procs}},
		{"GOMAXPROCS: theirs", map[string]string{"GOMAXPROCS": "4"}, runtimeSettings{memoryLimit: softMemoryLimit, gcPercent: gcPercent}},
		{"all three: the runtime's", map[string]string{"GOMEMLIMIT": "1GiB", "GOGC": "off", "GOMAXPROCS": "2"}, runtimeSettings{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := runtimeFor(func(k string) string { return c.env[k] }); got != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}
