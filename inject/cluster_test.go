package inject

import "testing"

func TestClusterFrom(t *testing.T) {
	for _, c := range []struct {
		name   string
		server string
		nodes  []Node
		native bool
		reason string
	}{
		{"new, no nodes", "v1.37.2", nil, true, ""},
		{"new, new nodes", "v1.37.2", []Node{{"a", "v1.37.2"}, {"b", "v1.33.0-gke.1"}}, true, ""},
		{"server before 1.33", "v1.32.9", []Node{{"a", "v1.32.9"}}, false, "the API server is v1.32.9, before 1.33"},
		{"server 1.30", "v1.30.14", nil, false, "the API server is v1.30.14, before 1.33"},
		{"one old kubelet", "v1.37.2", []Node{{"new", "v1.37.2"}, {"old", "v1.34.1"}, {"older", "v1.30.0"}}, false,
			"node older's kubelet is v1.30.0, before 1.33"},
		{"old kubelets, first by name", "v1.37.2", []Node{{"z", "v1.31.0"}, {"m", "v1.32.0"}, {"a", "v1.37.0"}}, false,
			"node m's kubelet is v1.32.0, before 1.33 (and 1 more nodes)"},
		{"unreadable kubelet", "v1.37.2", []Node{{"odd", "unknown"}}, false, `node odd's kubelet is unknown, before 1.33`},
		{"unreadable server", "weird", nil, false, `the API server's version weird cannot be read`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ClusterFrom(c.server, c.nodes)
			if !got.Known || got.NativeSidecars != c.native || got.Reason != c.reason || got.Version != c.server {
				t.Errorf("ClusterFrom(%q, %v) = %+v, want native %v, reason %q", c.server, c.nodes, got, c.native, c.reason)
			}
		})
	}
}

func TestParseKubeVersion(t *testing.T) {
	for s, want := range map[string]int{"v1.29": 29, "1.30.2": 30, "v1.31.0-gke.1": 31, "v1.33.1+k3s1": 33} {
		if got, err := ParseKubeVersion(s); err != nil || got != want {
			t.Errorf("ParseKubeVersion(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "1", "v2.0", "vx.y", "1.2.3.4"} {
		if _, err := ParseKubeVersion(s); err == nil {
			t.Errorf("ParseKubeVersion(%q): no error", s)
		}
	}
}
