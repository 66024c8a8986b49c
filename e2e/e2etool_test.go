//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// e2etool runs the helper built from the kubelet module (see
// kubelet/e2etool): it holds the YAML, kustomize and CRI libraries.
func e2etool(stdin string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(env.bin, "e2etool"), args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("e2etool %v: %w: %s", args, err, stderr.String())
	}
	return out, nil
}

// yamlDocs decodes a multi-document YAML text into generic objects.
func yamlDocs(t *testing.T, text string) []map[string]any {
	t.Helper()
	out, err := e2etool(text, "yaml2json")
	if err != nil {
		t.Fatal(err)
	}
	var docs []map[string]any
	if err := json.Unmarshal(out, &docs); err != nil {
		t.Fatal(err)
	}
	return docs
}

// podYAML decodes a YAML text holding exactly one Pod.
func podYAML(t *testing.T, text string) map[string]any {
	t.Helper()
	docs := yamlDocs(t, text)
	if len(docs) != 1 || docs[0]["kind"] != "Pod" {
		t.Fatalf("want one Pod, got %d documents", len(docs))
	}
	return docs[0]
}

// criContainer is the runtime's record of a container, with nanosecond
// times (the kubelet's API rounds them to seconds).
type criContainer struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	PodUID     string `json:"podUID"`
	State      string `json:"state"`
	ExitCode   int32  `json:"exitCode"`
	StartedAt  int64  `json:"startedAt"`
	FinishedAt int64  `json:"finishedAt"`
}

// criContainers lists the runtime's containers of a Pod (by UID).
func criContainers(uid string) ([]criContainer, error) {
	out, err := e2etool("", "cri-containers", env.containerdSock())
	if err != nil {
		return nil, err
	}
	var all, mine []criContainer
	if err := json.Unmarshal(out, &all); err != nil {
		return nil, err
	}
	for _, c := range all {
		if c.PodUID == uid {
			mine = append(mine, c)
		}
	}
	return mine, nil
}
