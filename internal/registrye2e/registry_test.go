//go:build e2e

package registrye2e

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// registryBinary is distribution's registry, built once per version into
// the e2e cache (E2E_CACHE, default ~/.cache/job-signal-e2e).
var registryBinary string

func TestMain(m *testing.M) {
	bin, err := buildRegistry()
	if err != nil {
		fmt.Fprintln(os.Stderr, "registrye2e: build the registry:", err)
		os.Exit(1)
	}
	registryBinary = bin
	os.Exit(m.Run())
}

func buildRegistry() (string, error) {
	module, err := filepath.Abs("registry")
	if err != nil {
		return "", err
	}
	gomod, err := os.ReadFile(filepath.Join(module, "go.mod"))
	if err != nil {
		return "", err
	}
	m := regexp.MustCompile(`github.com/distribution/distribution/v3 (v\S+)`).FindSubmatch(gomod)
	if m == nil {
		return "", errors.New("registry/go.mod does not require distribution/v3")
	}
	cache := os.Getenv("E2E_CACHE")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		cache = filepath.Join(home, ".cache", "job-signal-e2e")
	}
	bin := filepath.Join(cache, "registry-"+string(m[1]))
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	fmt.Fprintf(os.Stderr, "registrye2e: building distribution's registry %s into %s (a few minutes when cold)\n", m[1], bin)
	start := time.Now()
	tmp := bin + ".tmp" // renamed when complete: a killed build leaves no half binary
	cmd := exec.Command("go", "build", "-C", module, "-trimpath", "-ldflags=-s -w", "-o", tmp,
		"github.com/distribution/distribution/v3/cmd/registry")
	cmd.Env = append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", err
	}
	fmt.Fprintf(os.Stderr, "registrye2e: E2E_TIMING registry_build_seconds=%.1f\n", time.Since(start).Seconds())
	return bin, os.Rename(tmp, bin)
}

// registry is a running distribution registry on 127.0.0.1.
type registry struct {
	host string // 127.0.0.1:PORT
}

// startRegistry starts a registry with its storage in a temporary
// directory; with user set, it requires basic auth (htpasswd). It is
// stopped by PID at the end of the test.
func startRegistry(t *testing.T, user, password string) *registry {
	t.Helper()
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := l.Addr().String()
	l.Close() // the registry binds it next; nothing else here takes ports
	auth := ""
	if user != "" {
		hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		htpasswd := filepath.Join(dir, "htpasswd")
		if err := os.WriteFile(htpasswd, []byte(user+":"+string(hash)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		auth = fmt.Sprintf("auth:\n  htpasswd: {realm: job-signal-test, path: %s}\n", htpasswd)
	}
	config := filepath.Join(dir, "config.yml")
	err = os.WriteFile(config, []byte(fmt.Sprintf(`version: 0.1
log: {level: warn, accesslog: {disabled: true}}
storage:
  filesystem: {rootdirectory: %s}
http:
  addr: %s
  secret: job-signal-test
%s`, filepath.Join(dir, "data"), host, auth)), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(filepath.Join(dir, "registry.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(registryBinary, "serve", config)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
		logFile.Close()
	})
	// Ready when /v2/ answers (200, or 401 with auth).
	deadline := time.Now().Add(60 * time.Second)
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		resp, err := client.Get("http://" + host + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusUnauthorized {
				return &registry{host: host}
			}
		}
		select {
		case err := <-exited:
			log, _ := os.ReadFile(filepath.Join(dir, "registry.log"))
			t.Fatalf("the registry exited (%v):\n%s", err, log)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the registry on %s is not ready after 60 s", host)
		}
	}
}
