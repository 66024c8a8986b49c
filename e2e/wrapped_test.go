//go:build e2e

package e2e

import (
	"strings"
)

// wrapped describes a test Pod laid out as manifests/ lay out theirs: the
// shared volume, the install init container, the job under job-signal and
// each sidecar under sidecar-watch, all non-root on read-only root
// filesystems.
type wrapped struct {
	name      string
	grace     int      // terminationGracePeriodSeconds; 10 if 0
	job       []string // the job's own command
	jobFlags  []string // job-signal flags besides --wait-for
	jobLimits map[string]any
	sidecars  []sidecar
}

type sidecar struct {
	name    string
	flags   []string // sidecar-watch flags besides --name
	command []string
}

func restrictedContext() map[string]any {
	return map[string]any{
		"readOnlyRootFilesystem":   true,
		"allowPrivilegeEscalation": false,
		"capabilities":             map[string]any{"drop": []string{"ALL"}},
	}
}

func signalMount() []any {
	return []any{map[string]any{"name": "job-signal", "mountPath": signalDir}}
}

func testContainer(name, img string, command, args []string) map[string]any {
	c := map[string]any{
		"name": name, "image": img, "imagePullPolicy": "Never",
		"command": command, "volumeMounts": signalMount(), "securityContext": restrictedContext(),
	}
	if args != nil {
		c["args"] = args
	}
	return c
}

func (w wrapped) pod() map[string]any {
	grace := w.grace
	if grace == 0 {
		grace = 10
	}
	var names []string
	for _, s := range w.sidecars {
		names = append(names, s.name)
	}
	jobCmd := []string{jobSignalPath}
	if len(names) > 0 {
		jobCmd = append(jobCmd, "--wait-for="+strings.Join(names, ","))
	}
	jobCmd = append(append(jobCmd, w.jobFlags...), "--")
	job := testContainer("job", busyboxImage, jobCmd, w.job)
	if w.jobLimits != nil {
		job["resources"] = map[string]any{"limits": w.jobLimits}
	}
	containers := []any{job}
	for _, s := range w.sidecars {
		cmd := append(append([]string{sidecarWatchPath, "--name=" + s.name}, s.flags...), "--")
		containers = append(containers, testContainer(s.name, busyboxImage, cmd, s.command))
	}
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "Pod",
		"metadata":   map[string]any{"name": w.name},
		"spec": map[string]any{
			"restartPolicy":                 "Never",
			"terminationGracePeriodSeconds": grace,
			"securityContext": map[string]any{
				"runAsNonRoot": true, "runAsUser": 65532, "runAsGroup": 65532,
				"seccompProfile": map[string]any{"type": "RuntimeDefault"},
			},
			"volumes": []any{map[string]any{
				"name": "job-signal", "emptyDir": map[string]any{"medium": "Memory", "sizeLimit": "32Mi"},
			}},
			"initContainers": []any{testContainer("job-signal-install", productImage,
				[]string{"/usr/local/bin/job-signal", "install", installDir}, nil)},
			"containers": containers,
		},
	}
}
