package jobsignal

import (
	"slices"
	"testing"

	"github.com/job-signal/job-signal/signalfs"
)

// The gate's decision over each condition the classifier gives.
func TestJudge(t *testing.T) {
	view := func(name string, c signalfs.SidecarCondition, terminating bool) signalfs.SidecarView {
		return signalfs.SidecarView{Name: name, Condition: c, State: signalfs.SidecarState{Name: name, Terminating: terminating}}
	}
	for _, tc := range []struct {
		name                        string
		views                       []signalfs.SidecarView
		pending, failed, terminated []string
	}{
		{"all ready", []signalfs.SidecarView{view("a", signalfs.SidecarIsReady, false), view("b", signalfs.SidecarIsReady, false)}, nil, nil, nil},
		{"missing and starting wait", []signalfs.SidecarView{view("a", signalfs.SidecarMissing, false), view("b", signalfs.SidecarPending, false)}, []string{"a", "b"}, nil, nil},
		{"a dead sidecar may come back with its container", []signalfs.SidecarView{view("a", signalfs.SidecarDead, false)}, []string{"a"}, nil, nil},
		{"unreadable waits", []signalfs.SidecarView{view("a", signalfs.SidecarUnreadable, false)}, []string{"a"}, nil, nil},
		{"stopping waits", []signalfs.SidecarView{view("a", signalfs.SidecarIsStopping, false)}, []string{"a"}, nil, nil},
		{"failed ends the gate", []signalfs.SidecarView{view("a", signalfs.SidecarIsFailed, false), view("b", signalfs.SidecarPending, false)}, []string{"b"}, []string{"a"}, nil},
		{"stopped ends the gate", []signalfs.SidecarView{view("a", signalfs.SidecarIsStopped, false)}, nil, []string{"a"}, nil},
		{"stopped at Pod termination", []signalfs.SidecarView{view("a", signalfs.SidecarIsStopped, true)}, nil, nil, []string{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := judge(tc.views)
			names := func(vs []signalfs.SidecarView) []string {
				var out []string
				for _, s := range vs {
					out = append(out, s.Name)
				}
				return out
			}
			if !slices.Equal(names(v.pending), tc.pending) || !slices.Equal(names(v.failed), tc.failed) || !slices.Equal(names(v.terminated), tc.terminated) {
				t.Errorf("pending/failed/terminated = %v/%v/%v, want %v/%v/%v", names(v.pending), names(v.failed), names(v.terminated), tc.pending, tc.failed, tc.terminated)
			}
		})
	}
}
