package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// buildBefore builds job-signal and sidecar-watch as they were at the git
// revision b.before, from `git archive` of it, as the binaries are built.
func (b *bench) buildBefore() error {
	fmt.Fprintln(os.Stderr, "bench: building job-signal at", b.before)
	src := filepath.Join(b.work, "before-src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return err
	}
	archive := exec.Command("git", "archive", "--format=tar", b.before)
	extract := exec.Command("tar", "-x", "-C", src)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return err
	}
	extract.Stdin, archive.Stderr, extract.Stderr = pipe, os.Stderr, os.Stderr
	if err := extract.Start(); err != nil {
		return err
	}
	if err := archive.Run(); err != nil {
		return fmt.Errorf("git archive %s: %w", b.before, err)
	}
	if err := extract.Wait(); err != nil {
		return fmt.Errorf("extract %s: %w", b.before, err)
	}
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", filepath.Join(b.work, "before-bin")+"/",
		"./cmd/job-signal", "./cmd/sidecar-watch")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

func (b *bench) beforePath(prog string) string { return filepath.Join(b.work, "before-bin", prog) }
