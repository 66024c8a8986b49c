package kubectl

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/job-signal/job-signal/inject"
)

// TestDecideTarget: the flags and the cluster's answer give the target
// inject chooses forms for; auto on an unknown cluster says why it writes
// the pair.
func TestDecideTarget(t *testing.T) {
	v137 := inject.Cluster{Known: true, NativeSidecars: true, Version: "v1.37.2"}
	v128 := inject.Cluster{Known: true, NativeSidecars: false, Version: "v1.28.0"}
	for _, tc := range []struct {
		name    string
		mode    inject.Mode
		version string
		offline bool
		asked   detected
		ask     bool
		want    inject.Target
		note    string // a part of it; "" for none
		err     string
	}{
		{"--kube-version 1.33: native sidecars", inject.ModeAuto, "v1.33", false, detected{}, false,
			inject.Target{Mode: inject.ModeAuto, Cluster: inject.Cluster{Known: true, NativeSidecars: true, Version: "v1.33"}}, "", ""},
		{"--kube-version 1.32: none, saying why", inject.ModeAuto, "1.32.3", true, detected{}, false,
			inject.Target{Mode: inject.ModeAuto, Cluster: inject.Cluster{Known: true, Version: "v1.32.3", Reason: "the API server is v1.32.3, before 1.33"}}, "", ""},
		{"--kube-version 1.29: none (the gate may be off in a kubelet)", inject.ModeAuto, "v1.29", false, detected{}, false,
			inject.Target{Mode: inject.ModeAuto, Cluster: inject.Cluster{Known: true, Version: "v1.29", Reason: "the API server is v1.29, before 1.33"}}, "", ""},
		{"--kube-version wins over the cluster", inject.ModeNative, "v1.34.0-gke.1", false, detected{}, false,
			inject.Target{Mode: inject.ModeNative, Cluster: inject.Cluster{Known: true, NativeSidecars: true, Version: "v1.34.0-gke.1"}}, "", ""},
		{"online: the cluster's answer", inject.ModeAuto, "", false, detected{cluster: v137}, true,
			inject.Target{Mode: inject.ModeAuto, Cluster: v137}, "", ""},
		{"online, an old cluster", inject.ModeAuto, "", false, detected{cluster: v128}, true,
			inject.Target{Mode: inject.ModeAuto, Cluster: v128}, "", ""},
		{"online, 1.31 keeping the dry run's sidecar: none (a kubelet may have the gate off)", inject.ModeAuto, "", false,
			detected{cluster: inject.Cluster{Known: true, NativeSidecars: true, Version: "v1.31.4"}}, true,
			inject.Target{Mode: inject.ModeAuto, Cluster: inject.Cluster{Known: true, Version: "v1.31.4", Reason: "the API server is v1.31.4, before 1.33"}}, "", ""},
		{"--offline: unknown, auto notes the pair", inject.ModeAuto, "", true, detected{}, false,
			inject.Target{Mode: inject.ModeAuto}, "not known (--offline)", ""},
		{"unreachable: unknown, auto notes the pair", inject.ModeAuto, "", false, detected{unknown: "it did not answer: connection refused"}, true,
			inject.Target{Mode: inject.ModeAuto}, "not known (it did not answer: connection refused)", ""},
		{"no kubeconfig", inject.ModeAuto, "", false, detected{unknown: "no kubeconfig"}, true,
			inject.Target{Mode: inject.ModeAuto}, "--kube-version", ""},
		{"native, unknown: the user's choice, no note", inject.ModeNative, "", true, detected{}, false,
			inject.Target{Mode: inject.ModeNative}, "", ""},
		{"pair: the cluster is not asked", inject.ModePair, "", false, detected{}, false,
			inject.Target{Mode: inject.ModePair}, "", ""},
		{"a bad --kube-version", inject.ModeAuto, "latest", false, detected{}, false,
			inject.Target{Mode: inject.ModeAuto}, "", `--kube-version: "latest" is not a Kubernetes version`},
		{"Kubernetes 2", inject.ModeAuto, "v2.0", false, detected{}, false,
			inject.Target{Mode: inject.ModeAuto}, "", "only Kubernetes 1.x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if ask := asksCluster(tc.mode, tc.version, tc.offline); ask != tc.ask {
				t.Errorf("asksCluster = %v, want %v", ask, tc.ask)
			}
			got, note, err := decideTarget(tc.mode, tc.version, tc.offline, tc.asked)
			switch {
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("error %v, want one with %q", err, tc.err)
			case tc.err == "" && err != nil:
				t.Fatal(err)
			case tc.err == "" && got != tc.want:
				t.Errorf("target %+v, want %+v", got, tc.want)
			}
			if tc.note == "" && note != "" || !strings.Contains(note, tc.note) || strings.Contains(note, "\n") {
				t.Errorf("note %q, want one line with %q", note, tc.note)
			}
		})
	}
}

// TestModeFlags: the flags reach the plugin, a bad value is a usage
// error naming the flag, and offline auto says on stderr that it writes
// the pair.
func TestModeFlags(t *testing.T) {
	input := filepath.Join(t.TempDir(), "job.yaml")
	if err := os.WriteFile(input, []byte(stream), 0o644); err != nil { // every container has a command: offline is enough
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"--mode", "fast"}, 2, `--mode must be one of "pair","native","auto"`},
		{[]string{"--kube-version", "1"}, 2, `--kube-version: "1" is not a Kubernetes version (vMAJOR.MINOR[.PATCH], e.g. v1.33)`},
		{[]string{"--offline"}, 0, "note: the cluster is not known (--offline): --mode auto writes job-signal's pair"},
		{[]string{"--offline", "--mode", "auto"}, 0, "note: the cluster is not known (--offline)"},
		{[]string{"--offline", "--mode", "pair"}, 0, ""},
		{[]string{"--offline", "--kube-version", "v1.27"}, 0, ""},
	} {
		var stdout, stderr bytes.Buffer
		code := Main(context.Background(), append([]string{"inject", "-f", input}, tc.args...), nil, &stdout, &stderr)
		if code != tc.code || tc.stderr != "" && !strings.Contains(stderr.String(), tc.stderr) || tc.stderr == "" && strings.Contains(stderr.String(), "not known") {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr.String(), tc.code, tc.stderr)
		}
	}
}
