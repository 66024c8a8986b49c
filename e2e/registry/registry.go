package registry

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/job-signal/job-signal/e2e/cluster"
	"golang.org/x/crypto/bcrypt"
)

var (
	binaryOnce sync.Once
	binaryPath string
	binaryErr  error
)

// Binary is distribution's registry, built once per version (from the
// module in registry/) into the e2e cache, ${E2E_CACHE:-~/.cache/job-signal-e2e}.
func Binary() (string, error) {
	binaryOnce.Do(func() { binaryPath, binaryErr = buildBinary() })
	return binaryPath, binaryErr
}

func buildBinary() (string, error) {
	repo, err := cluster.FindRepo()
	if err != nil {
		return "", err
	}
	module := filepath.Join(repo, "e2e", "registry", "distribution")
	gomod, err := os.ReadFile(filepath.Join(module, "go.mod"))
	if err != nil {
		return "", err
	}
	m := regexp.MustCompile(`github.com/distribution/distribution/v3 (v\S+)`).FindSubmatch(gomod)
	if m == nil {
		return "", errors.New("distribution/go.mod does not require distribution/v3")
	}
	cache, err := cluster.DefaultCache()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(cache, "registry-"+string(m[1]))
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	fmt.Fprintf(os.Stderr, "e2e/registry: building distribution's registry %s into %s (a few minutes when cold)\n", m[1], bin)
	start := time.Now()
	tmp := bin + ".tmp" // renamed when complete: a killed build leaves no half binary
	cmd := exec.Command("go", "build", "-C", module, "-trimpath", "-ldflags=-s -w", "-o", tmp,
		"github.com/distribution/distribution/v3/cmd/registry")
	cmd.Env = append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // the tests died: stop building
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build the registry: %w", err)
	}
	fmt.Fprintf(os.Stderr, "e2e/registry: E2E_TIMING registry_build_seconds=%.1f\n", time.Since(start).Seconds())
	return bin, os.Rename(tmp, bin)
}

// Registry is a running distribution registry on 127.0.0.1.
type Registry struct {
	Host string // 127.0.0.1:PORT; plain HTTP, which go-containerregistry and containerd use for a loopback host
}

// Start starts a registry with its storage in a temporary directory; with
// user set, every repository needs basic auth (htpasswd). It is stopped by
// PID at the end of the test, and dies with the test binary.
func Start(t testing.TB, user, password string) *Registry {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		t.Fatal(err)
	}
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
	logPath := filepath.Join(dir, "registry.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", config)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
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
				return &Registry{Host: host}
			}
		}
		select {
		case err := <-exited:
			log, _ := os.ReadFile(logPath)
			t.Fatalf("the registry exited (%v):\n%s", err, log)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the registry on %s is not ready after 60 s", host)
		}
	}
}

// Silent listens on 127.0.0.1 and accepts connections that it never
// answers: a registry that hangs. It returns the address, and closes
// everything at the end of the test.
func Silent(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var held []net.Conn
		for {
			c, err := l.Accept()
			if err != nil {
				for _, c := range held {
					c.Close()
				}
				return
			}
			held = append(held, c)
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
	})
	return l.Addr().String()
}
