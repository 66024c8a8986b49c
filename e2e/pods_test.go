//go:build e2e

package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// What the suite reads of a v1 Pod: a few fields decoded with encoding/json,
// so the main module needs no Kubernetes API types.
type pod struct {
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
		UID       string `json:"uid"`
	} `json:"metadata"`
	Status struct {
		Phase                 string            `json:"phase"`
		Reason                string            `json:"reason"`
		Message               string            `json:"message"`
		InitContainerStatuses []containerStatus `json:"initContainerStatuses"`
		ContainerStatuses     []containerStatus `json:"containerStatuses"`
	} `json:"status"`
	raw json.RawMessage // the kubelet's whole answer, for failure reports
}

type containerStatus struct {
	Name         string         `json:"name"`
	Ready        bool           `json:"ready"`
	RestartCount int            `json:"restartCount"`
	ContainerID  string         `json:"containerID"`
	State        containerState `json:"state"`
	LastState    containerState `json:"lastState"`
}

type containerState struct {
	Waiting *struct {
		Reason  string `json:"reason"`
		Message string `json:"message"`
	} `json:"waiting"`
	Running *struct {
		StartedAt time.Time `json:"startedAt"`
	} `json:"running"`
	Terminated *terminated `json:"terminated"`
}

type terminated struct {
	ExitCode   int       `json:"exitCode"`
	Signal     int       `json:"signal"`
	Reason     string    `json:"reason"`
	Message    string    `json:"message"`
	StartedAt  time.Time `json:"startedAt"`
	FinishedAt time.Time `json:"finishedAt"` // whole seconds only
}

// container finds a container's status, init or regular, by name.
func (p *pod) container(name string) *containerStatus {
	for _, list := range [][]containerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

func (p *pod) terminal() bool { return p.Status.Phase == "Succeeded" || p.Status.Phase == "Failed" }

// summary is one line per container, for logs and failure messages.
func (p *pod) summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "phase %s %s", p.Status.Phase, p.Status.Reason)
	for _, list := range [][]containerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for _, c := range list {
			fmt.Fprintf(&b, "\n  %s: restarts %d, ", c.Name, c.RestartCount)
			switch s := c.State; {
			case s.Terminated != nil:
				fmt.Fprintf(&b, "terminated %s exit %d signal %d message %q", s.Terminated.Reason, s.Terminated.ExitCode, s.Terminated.Signal, s.Terminated.Message)
			case s.Running != nil:
				fmt.Fprintf(&b, "running, ready %v", c.Ready)
			case s.Waiting != nil:
				fmt.Fprintf(&b, "waiting %s %s", s.Waiting.Reason, s.Waiting.Message)
			}
		}
	}
	return b.String()
}

// kubeletPods lists the Pods the kubelet knows, with their status.
func kubeletPods() ([]*pod, error) {
	body, err := httpGet(fmt.Sprintf("http://127.0.0.1:%d/pods", kubeletReadOnlyPort))
	if err != nil {
		return nil, err
	}
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return nil, fmt.Errorf("decoding /pods: %w", err)
	}
	pods := make([]*pod, 0, len(list.Items))
	for _, raw := range list.Items {
		p := &pod{raw: raw}
		if err := json.Unmarshal(raw, p); err != nil {
			return nil, fmt.Errorf("decoding a Pod of /pods: %w", err)
		}
		pods = append(pods, p)
	}
	return pods, nil
}

// staticPod is one Pod the test put in the kubelet's static Pod folder.
type staticPod struct {
	t         *testing.T
	name      string // the kubelet's name for it: ours plus "-" + node name
	namespace string
	file      string
	uid       string // known once the kubelet has listed the Pod
	deleted   bool
}

var podSeq atomic.Int32

// runPod writes spec (a v1 Pod as decoded JSON) into the static Pod folder
// under a name unique to this run: a new Pod with an old Pod's name would
// wait until the old one is gone. The Pod is deleted when the test ends; if
// the test failed, the kubelet's view of it and its logs are printed first.
func runPod(t *testing.T, spec map[string]any) *staticPod {
	t.Helper()
	meta, _ := spec["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		spec["metadata"] = meta
	}
	base, _ := meta["name"].(string)
	if base == "" {
		base = "pod"
	}
	if len(base) > 30 {
		base = strings.TrimRight(base[:30], "-")
	}
	name := fmt.Sprintf("%s-%s-%d", base, env.runID, podSeq.Add(1))
	meta["name"] = name
	ns, _ := meta["namespace"].(string)
	if ns == "" {
		ns = "default"
	}
	body, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	sp := &staticPod{t: t, name: name + "-" + nodeName, namespace: ns,
		file: filepath.Join(env.manifests(), name+".json")}
	// The kubelet once read a half-written file: write a dotfile (which it
	// ignores), then rename it into place.
	tmp := filepath.Join(env.manifests(), "."+name+".json.tmp")
	if err := os.WriteFile(tmp, body, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, sp.file); err != nil {
		t.Fatal(err)
	}
	t.Logf("started static Pod %s", sp.name)
	t.Cleanup(func() {
		if t.Failed() {
			sp.report()
			if os.Getenv("E2E_KEEP") != "" {
				t.Logf("E2E_KEEP is set: Pod %s is left running (manifest %s)", sp.name, sp.file)
				return
			}
		}
		if err := sp.delete(); err != nil {
			t.Error(err)
		}
	})
	return sp
}

// get returns the kubelet's view of the Pod, or nil while it lists none.
func (sp *staticPod) get() (*pod, error) {
	pods, err := kubeletPods()
	if err != nil {
		return nil, err
	}
	for _, p := range pods {
		if p.Metadata.Name == sp.name && p.Metadata.Namespace == sp.namespace {
			sp.uid = p.Metadata.UID
			return p, nil
		}
	}
	return nil, nil
}

// waitFor polls the kubelet until cond holds for the Pod, and returns the
// Pod and when the poll saw it. It fails the test at the deadline.
func (sp *staticPod) waitFor(timeout time.Duration, what string, cond func(*pod) bool) (*pod, time.Time) {
	sp.t.Helper()
	var last *pod
	var seen time.Time
	err := poll(timeout, 100*time.Millisecond, func() (bool, string, error) {
		p, err := sp.get()
		if err != nil {
			return false, err.Error(), nil // the kubelet may be busy: retry
		}
		if p == nil {
			return false, "the kubelet does not list the Pod yet", nil
		}
		last, seen = p, time.Now()
		return cond(p), p.summary(), nil
	})
	if err != nil {
		sp.t.Fatalf("Pod %s: waiting for %s: %v", sp.name, what, err)
	}
	return last, seen
}

// waitTerminal waits for phase Succeeded or Failed.
func (sp *staticPod) waitTerminal(timeout time.Duration) (*pod, time.Time) {
	sp.t.Helper()
	return sp.waitFor(timeout, "a terminal phase", (*pod).terminal)
}

// delete removes the manifest and waits until the kubelet has stopped the
// Pod: it lists it no more, and no process is left in the Pod's cgroup.
func (sp *staticPod) delete() error {
	if sp.deleted {
		return nil
	}
	sp.deleted = true
	if err := os.Remove(sp.file); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	// The longest a Pod may take: the suite's Pods set grace periods of
	// seconds, but the default is 30 s.
	return poll(90*time.Second, 200*time.Millisecond, func() (bool, string, error) {
		p, err := sp.get()
		if err != nil {
			return false, err.Error(), nil
		}
		if p != nil {
			return false, "the kubelet still lists the Pod: " + p.summary(), nil
		}
		if sp.uid == "" {
			return true, "", nil // never started
		}
		cg, err := findCgroup(env.cgroups+"/pods", "pod"+sp.uid)
		if err != nil || cg == "" {
			return err == nil, "", err
		}
		pids, err := cgroupPids(cg)
		if err != nil {
			return false, "", err
		}
		return len(pids) == 0, fmt.Sprintf("processes %v still in %s", pids, cg), nil
	})
}

// logDir is where the kubelet keeps the Pod's container logs.
func (sp *staticPod) logDir() string {
	uid := sp.uid
	if uid == "" {
		uid = "*"
	}
	matches, _ := filepath.Glob(filepath.Join(env.podLogs(), sp.namespace+"_"+sp.name+"_"+uid))
	if len(matches) == 0 {
		return ""
	}
	return matches[0]
}

// logLine is one line of a container's log, as the runtime recorded it.
type logLine struct {
	time   time.Time // when the runtime read the line, nanosecond precision
	stream string
	text   string
}

// logs returns the lines of a container's latest run ("N.log", highest N).
func (sp *staticPod) logs(container string) []logLine {
	files, _ := filepath.Glob(filepath.Join(sp.logDir(), container, "*.log"))
	if len(files) == 0 {
		return nil
	}
	latest := files[0]
	for _, f := range files {
		if len(f) > len(latest) || (len(f) == len(latest) && f > latest) {
			latest = f
		}
	}
	b, err := os.ReadFile(latest)
	if err != nil {
		return nil
	}
	var lines []logLine
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		// CRI format: RFC3339Nano time, stream, P(artial)/F(ull), text
		parts := strings.SplitN(l, " ", 4)
		if len(parts) < 4 {
			continue
		}
		ts, err := time.Parse(time.RFC3339Nano, parts[0])
		if err != nil {
			continue
		}
		lines = append(lines, logLine{time: ts, stream: parts[1], text: parts[3]})
	}
	return lines
}

// logText is a container's log as plain text.
func (sp *staticPod) logText(container string) string {
	var b strings.Builder
	for _, l := range sp.logs(container) {
		b.WriteString(l.text)
		b.WriteByte('\n')
	}
	return b.String()
}

// report prints what is needed to understand a failure: the kubelet's view
// of the Pod, every container log, and the kubelet's log lines naming it.
func (sp *staticPod) report() {
	t := sp.t
	if p, err := sp.get(); err != nil {
		t.Logf("--- kubelet view of %s: %v", sp.name, err)
	} else if p == nil {
		t.Logf("--- kubelet view of %s: not listed", sp.name)
	} else {
		var pretty strings.Builder
		var v any
		_ = json.Unmarshal(p.raw, &v)
		out, _ := json.MarshalIndent(v, "", "  ")
		pretty.Write(out)
		t.Logf("--- kubelet view of %s:\n%s\n%s", sp.name, p.summary(), pretty.String())
	}
	dir := sp.logDir()
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.log"))
	if len(files) == 0 {
		t.Logf("--- no container logs in %q", dir)
	}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		t.Logf("--- log %s:\n%s", strings.TrimPrefix(f, dir+"/"), b)
	}
	if b, err := os.ReadFile(filepath.Join(env.logs, "kubelet.log")); err == nil {
		var lines []string
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, sp.name) {
				lines = append(lines, l)
			}
		}
		if len(lines) > 40 {
			lines = lines[len(lines)-40:]
		}
		t.Logf("--- kubelet.log lines naming %s (last %d):\n%s", sp.name, len(lines), strings.Join(lines, "\n"))
	}
}
