package manifests

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/job-signal/job-signal/inject"
)

// The layout job-signal adds to a Pod (README.md, "Kubernetes"), as inject
// writes it: the manifests must agree with what the plugin and the webhook
// produce.
const (
	stateVolume = inject.StateVolume
	stateDir    = inject.StateDir
	binVolume   = inject.BinVolume
	binDir      = inject.BinDir
	installName = inject.InitContainer
)

// TestLayout: every Pod that uses job-signal has the state and binary
// volumes in memory, the install init container first, the binaries
// writable by that container only, and each wrapped container runs a binary
// from the read-only volume with both volumes mounted.
func TestLayout(t *testing.T) {
	wrappedPods := 0
	for _, src := range sources(t) {
		if strings.Contains(string(src.text), "/var/run/job-signal/bin") {
			t.Errorf("%s: the binaries are in %s now, not /var/run/job-signal/bin", src.name, binDir)
		}
		for _, pod := range podTemplates(src) {
			if !usesJobSignal(pod.spec) {
				continue
			}
			wrappedPods++
			for _, v := range layoutViolations(pod.spec) {
				t.Errorf("%s: %s", pod.where, v)
			}
		}
	}
	want := 5 // the examples; the kustomize one too when it is built
	if os.Getenv("KUBECTL") != "" {
		want = 6
	}
	if wrappedPods < want {
		t.Errorf("found %d Pods using job-signal, want at least %d", wrappedPods, want)
	}
}

func usesJobSignal(spec map[string]any) bool {
	for _, c := range podContainers(spec) {
		if c.name == installName {
			return true
		}
	}
	return false
}

// layoutViolations returns how a Pod using job-signal departs from the
// layout.
func layoutViolations(spec map[string]any) []string {
	var bad []string
	fail := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	volumes := map[string]map[string]any{}
	for _, v := range list(spec, "volumes") {
		name, _ := asObject(v)["name"].(string)
		volumes[name] = asObject(v)
	}
	for _, name := range []string{stateVolume, binVolume} {
		if medium, _ := object(volumes[name], "emptyDir")["medium"].(string); medium != "Memory" {
			fail("volume %s: want an emptyDir with medium Memory (a tmpfs, whose root is sticky)", name)
		}
	}
	inits := list(spec, "initContainers")
	if len(inits) == 0 || asObject(inits[0])["name"] != installName {
		fail("%s must be the first init container, so the binaries are there for every other", installName)
	}
	for _, c := range podContainers(spec) {
		mounts := map[string]map[string]any{}
		for _, m := range list(c.fields, "volumeMounts") {
			name, _ := asObject(m)["name"].(string)
			mounts[name] = asObject(m)
		}
		bin, mountsBin := mounts[binVolume]
		readOnly, _ := boolField(bin, "readOnly")
		if c.name == installName {
			want := []string{"/usr/local/bin/job-signal", "install", binDir}
			if got := stringList(list(c.fields, "command")); !reflect.DeepEqual(got, want) {
				fail("container %s: command %q, want %q", c.name, got, want)
			}
			if !mountsBin || readOnly || bin["mountPath"] != binDir {
				fail("container %s: must mount %s read-write at %s", c.name, binVolume, binDir)
			}
			if _, ok := mounts[stateVolume]; ok {
				fail("container %s: needs no access to the state volume", c.name)
			}
			continue
		}
		if mountsBin && !readOnly {
			fail("container %q: mounts %s writable: only %s may write the binaries", c.name, binVolume, installName)
		}
		command := stringList(list(c.fields, "command"))
		if len(command) == 0 || !strings.HasPrefix(command[0], binDir+"/") {
			continue
		}
		if !mountsBin || bin["mountPath"] != binDir {
			fail("container %q: runs %s but does not mount %s at %s", c.name, command[0], binVolume, binDir)
		}
		if state, ok := mounts[stateVolume]; !ok || state["mountPath"] != stateDir || isTrue(state, "readOnly") {
			fail("container %q: must mount %s read-write at %s", c.name, stateVolume, stateDir)
		}
	}
	return bad
}
