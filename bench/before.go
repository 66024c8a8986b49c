package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// buildBefore builds job-signal and sidecar-watch as they were at the git
// revision b.before, as the binaries are built.
func (b *bench) buildBefore() error {
	fmt.Fprintln(os.Stderr, "bench: building job-signal at", b.before)
	src := filepath.Join(b.work, "before-src")
	if err := extractRevision(b.before, src); err != nil {
		return fmt.Errorf("git archive %s: %w", b.before, err)
	}
	return buildIn(src, filepath.Join(b.work, "before-bin")+"/", "./cmd/job-signal", "./cmd/sidecar-watch")
}

func (b *bench) beforePath(prog string) string { return filepath.Join(b.work, "before-bin", prog) }

// extractRevision writes the tree of the git revision rev into dir, from
// `git archive` of it.
func extractRevision(rev, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	archive := exec.Command("sh", "-c", `git archive "$0" | tar -x -C "$1"`, rev, dir)
	archive.Stderr = os.Stderr
	return archive.Run()
}

// buildIn builds the packages pkgs of the module in dir into out (a
// directory ending in "/", or a file for one package) as the binaries are
// released: static, stripped.
func buildIn(dir, out string, pkgs ...string) error {
	build := exec.Command("go", append([]string{"build", "-trimpath", "-ldflags", "-s -w", "-o", out}, pkgs...)...)
	build.Dir = dir
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	return build.Run()
}
