// Command helmtool builds helm and the kustomize renderer of tools/helm
// into the cache, unless they are there, and prints their paths: make test
// runs it before the tests (so the first build is not timed by go test),
// and a shell can use it:
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
	switch {
	case len(args) == 0:
		fmt.Println(t.Helm)
		fmt.Println(t.Kustomize)
	case len(args) == 1 && args[0] == "helm":
		fmt.Println(t.Helm)
	case len(args) == 1 && args[0] == "kustomize":
		fmt.Println(t.Kustomize)
	default:
		return fmt.Errorf("usage: helmtool [helm|kustomize], got %q", args)
	}
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
