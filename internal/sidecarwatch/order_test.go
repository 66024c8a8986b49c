package sidecarwatch

import (
	"slices"
	"strings"
	"testing"

	"github.com/job-signal/job-signal/signalfs"
)

// views builds a directory's sidecars from one word each.
func views(m map[string]string) func(string) signalfs.SidecarView {
	return func(name string) signalfs.SidecarView {
		v := signalfs.SidecarView{Name: name}
		switch m[name] {
		case "":
			v.Condition = signalfs.SidecarMissing
		case "ready":
			v.Condition = signalfs.SidecarIsReady
		case "starting":
			v.Condition, v.State.Phase = signalfs.SidecarPending, signalfs.SidecarStarting
		case "stopped":
			v.Condition = signalfs.SidecarIsStopped
		case "stopped-terminating":
			v.Condition, v.State.Terminating = signalfs.SidecarIsStopped, true
		case "failed":
			v.Condition = signalfs.SidecarIsFailed
		case "dead":
			v.Condition = signalfs.SidecarDead
		case "running-locked":
			v.Condition, v.State.Liveness = signalfs.SidecarIsReady, signalfs.LivenessFlock
		case "running-unlocked":
			v.Condition, v.State.Liveness = signalfs.SidecarIsReady, signalfs.LivenessNone
		default: // "waiting-for:a,b"
			after, _ := strings.CutPrefix(m[name], "waiting-for:")
			v.Condition, v.State.Phase, v.State.After = signalfs.SidecarPending, signalfs.SidecarWaiting, strings.Split(after, ",")
		}
		return v
	}
}

func TestDecideAfter(t *testing.T) {
	for _, tc := range []struct {
		name    string
		dir     map[string]string
		start   bool
		pending int
		stop    string
		err     string
	}{
		{"all ready", map[string]string{"db": "ready", "auth": "ready"}, true, 0, "", ""},
		{"one starting", map[string]string{"db": "ready", "auth": "starting"}, false, 1, "", ""},
		{"none there yet", map[string]string{}, false, 2, "", ""},
		{"one stopped for the Pod's end", map[string]string{"db": "stopped-terminating", "auth": "ready"}, false, 0, "the Pod is terminating (sidecar db stopped for it)", ""},
		{"one stopped for good", map[string]string{"db": "stopped", "auth": "ready"}, false, 0, "", "sidecar db will not become ready"},
		{"one failed", map[string]string{"db": "ready", "auth": "failed"}, false, 0, "", "sidecar auth will not become ready"},
		{"a cycle through another", map[string]string{"db": "waiting-for:me", "auth": "ready"}, false, 0, "", "start-order cycle me -> db -> me"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := decideAfter("me", []string{"db", "auth"}, "/d", views(tc.dir))
			if d.start != tc.start || len(d.pending) != tc.pending || d.stop != tc.stop {
				t.Errorf("got start=%v pending=%q stop=%q", d.start, d.pending, d.stop)
			}
			if (d.err == nil) != (tc.err == "") || (d.err != nil && !strings.Contains(d.err.Error(), tc.err)) {
				t.Errorf("err = %v, want %q", d.err, tc.err)
			}
		})
	}
}

func TestDecideStopAfter(t *testing.T) {
	for _, tc := range []struct {
		name                          string
		dir                           map[string]string
		pending, lockWait, notRunning []string
		unlocked                      bool
	}{
		{"all gone", map[string]string{"a": "stopped", "b": "failed"}, nil, nil, nil, false},
		{"dead and missing are warned about", map[string]string{"a": "dead"}, nil, nil, []string{"a", "b"}, false},
		{"locked ones are waited on by their lock", map[string]string{"a": "running-locked", "b": "stopped"}, []string{"a"}, []string{"a"}, nil, false},
		{"an unlocked one needs the directory", map[string]string{"a": "running-locked", "b": "running-unlocked"}, []string{"a", "b"}, []string{"a"}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := decideStopAfter([]string{"a", "b"}, views(tc.dir))
			if !slices.Equal(p.pending, tc.pending) || !slices.Equal(p.lockWait, tc.lockWait) || !slices.Equal(p.notRunning, tc.notRunning) || p.unlocked != tc.unlocked {
				t.Errorf("got %+v", p)
			}
		})
	}
}
