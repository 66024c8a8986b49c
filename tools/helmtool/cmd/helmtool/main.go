// Command helmtool builds the helm of tools/helm into the cache, unless
// it is there, and prints its path, for a shell:
//
//	$(go run ./tools/helmtool/cmd/helmtool helm) template job-signal-webhook charts/job-signal-webhook
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/job-signal/job-signal/tools/helmtool"
)

func main() {
	repo, err := findRepo()
	if err == nil {
		var t helmtool.Tools
		if t, err = helmtool.Build(repo); err == nil {
			err = print(t, os.Args[1:])
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "helmtool:", err)
		os.Exit(1)
	}
}

func print(t helmtool.Tools, args []string) error {
	if len(args) > 1 || len(args) == 1 && args[0] != "helm" {
		return fmt.Errorf("usage: helmtool [helm], got %q", args)
	}
	fmt.Println(t.Helm)
	return nil
}

// findRepo walks up from the working folder to the project's root, the
// folder that holds tools/helm/go.mod.
func findRepo() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "tools", "helm", "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no tools/helm/go.mod above the working folder: run it in the project's tree")
		}
		dir = parent
	}
}
