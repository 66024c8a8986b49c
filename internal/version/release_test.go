//go:build release

// The release's own checks, not part of make test (they build every
// program, minutes cold): `go test -tags release ./internal/version/`,
// which make release runs first (docs/release.md).

package version_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/job-signal/job-signal/internal/version"
)

// root is the repository's top folder.
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// makeIn runs make in dir with args and env added, and returns its output.
func makeIn(t *testing.T, dir string, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("make", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestMakeInstall: make install puts the four programs into PREFIX/bin,
// and each reports the version make stamped.
func TestMakeInstall(t *testing.T) {
	tmp := t.TempDir()
	const stamped = "v9.8.7-installtest"
	if out, err := makeIn(t, root(t), nil, "install", "PREFIX="+tmp+"/prefix", "BIN="+tmp+"/bin", "VERSION="+stamped); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	for name, args := range map[string][]string{
		"kubectl-job_signal": {"version"},
		"job-signal":         {"--version"},
		"sidecar-watch":      {"--version"},
		"job-signal-webhook": {"--version"},
	} {
		out, err := exec.Command(filepath.Join(tmp, "prefix", "bin", name), args...).CombinedOutput()
		if got := strings.TrimSpace(string(out)); err != nil || got != name+" "+stamped {
			t.Errorf("%s %s: %q (%v), want %q", name, strings.Join(args, " "), got, err, name+" "+stamped)
		}
	}
}

// TestMakeInstallWhere: without PREFIX, make install installs where go
// install does: GOBIN, else GOPATH/bin.
func TestMakeInstallWhere(t *testing.T) {
	tmp := t.TempDir()
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"GOBIN=" + tmp + "/gobin"}, tmp + "/gobin/"},
		{[]string{"GOBIN=", "GOPATH=" + tmp + "/gopath"}, tmp + "/gopath/bin/"},
	} {
		out, err := makeIn(t, root(t), tc.env, "-n", "install", "BIN="+tmp+"/bin")
		if err != nil || !strings.Contains(out, "install -m 0755 kubectl-job_signal job-signal sidecar-watch job-signal-webhook '"+tc.want+"'") {
			t.Errorf("%v: make -n install (%v) does not install into %s:\n%s", tc.env, err, tc.want, out)
		}
	}
}

// TestReleaseRefuses: make release publishes only a clean checkout of the
// tag internal/version.Release names, so that what it stamps and pushes
// is what go install ...@RELEASE gives.
func TestReleaseRefuses(t *testing.T) {
	clone := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", clone, "-c", "user.name=test", "-c", "user.email=test@example.invalid"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	if out, err := exec.Command("git", "clone", "-q", "--no-tags", root(t), clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	// The release as this checkout has it, committed in the clone.
	for _, f := range []string{"Makefile", "scripts/release.sh", "internal/version/version.go"} {
		b, err := os.ReadFile(filepath.Join(root(t), f))
		if err == nil {
			err = os.WriteFile(filepath.Join(clone, f), b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	git("commit", "-q", "--allow-empty", "-am", "this checkout's release")
	release := func() string {
		t.Helper()
		out, err := makeIn(t, clone, nil, "release", "RELEASE_PUSH=no")
		if err == nil {
			t.Fatalf("make release went ahead:\n%s", out)
		}
		return out
	}
	if out := release(); !strings.Contains(out, "HEAD is not tagged") {
		t.Errorf("untagged: %s", out)
	}
	git("tag", "-a", "-m", "not it", "v0.0.0-other")
	if out := release(); !strings.Contains(out, "HEAD is tagged v0.0.0-other, but internal/version.Release is "+version.Release) {
		t.Errorf("another tag: %s", out)
	}
	git("tag", "-d", "v0.0.0-other")
	git("tag", "-a", "-m", "the release", version.Release)
	if err := os.WriteFile(filepath.Join(clone, "README.md"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := release(); !strings.Contains(out, "the checkout has changes") {
		t.Errorf("a changed checkout: %s", out)
	}
}
