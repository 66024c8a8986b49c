//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/job-signal/job-signal/e2e/cluster"
)

// Real sidecar programs in images built here (no registry can be reached):
// the Cloud SQL Auth Proxy built from its Go module, and Debian's nginx and
// haproxy with the shared libraries they load. How each starts offline, is
// probed and is stopped: e2e/README.md, "Real sidecars".
const (
	cloudSQLProxyModule  = "github.com/GoogleCloudPlatform/cloud-sql-proxy/v2"
	cloudSQLProxyVersion = "v2.27.0"
	// Ports inside the Pods (each Pod has its own network namespace).
	nginxPort   = 18080
	haproxyPort = 18081
)

// The real sidecars' images, by the names they are built as
// (buildProductImages changes them as it does productImage).
var (
	nginxImage   = "localhost/nginx:e2e"
	haproxyImage = "localhost/haproxy:e2e"
)

// realSidecarPackages are the Debian packages the real sidecars come from,
// installed with the cluster's.
var realSidecarPackages = []string{"nginx-light", "haproxy"}

var (
	cloudSQLProxyOnce sync.Once
	cloudSQLProxyPath string
	cloudSQLProxyErr  error
)

// cloudSQLProxyBinary is the Cloud SQL Auth Proxy, built once per version
// (go install from the module proxy, static) into the e2e cache.
// TestMain starts it beside the cluster's build.
func cloudSQLProxyBinary() (string, error) {
	cloudSQLProxyOnce.Do(func() { cloudSQLProxyPath, cloudSQLProxyErr = buildCloudSQLProxy() })
	return cloudSQLProxyPath, cloudSQLProxyErr
}

func buildCloudSQLProxy() (string, error) {
	cache, err := cluster.DefaultCache()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "cloud-sql-proxy-"+cloudSQLProxyVersion)
	bin := filepath.Join(dir, "cloud-sql-proxy")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	logf("building the Cloud SQL Auth Proxy %s into %s (minutes when cold)", cloudSQLProxyVersion, dir)
	start := time.Now()
	tmp := dir + ".tmp" // renamed when complete: a killed build leaves no half folder
	if err := os.RemoveAll(tmp); err != nil {
		return "", err
	}
	cmd := exec.Command("go", "install", "-trimpath", "-ldflags=-s -w", cloudSQLProxyModule+"@"+cloudSQLProxyVersion)
	// go install pkg@version builds outside any module: the module's own
	// go.mod decides, and no -mod setting applies.
	cmd.Env = append(os.Environ(), "GOBIN="+tmp, "GOWORK=off", "CGO_ENABLED=0", "GOFLAGS=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // the tests died: stop building
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install %s@%s: %w\n%s", cloudSQLProxyModule, cloudSQLProxyVersion, err, out)
	}
	logf("E2E_TIMING cloud_sql_proxy_build seconds=%.1f", time.Since(start).Seconds())
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	return bin, os.Rename(tmp, dir)
}

// dynamicFiles are a dynamically linked program's files for an image FROM
// scratch: the program and every shared library ldd names (the loader
// included), each at the path ldd gives.
func dynamicFiles(programs ...string) ([]cluster.File, error) {
	seen := map[string]bool{}
	var files []cluster.File
	add := func(path string, mode int64) error {
		if seen[path] {
			return nil
		}
		seen[path] = true
		body, err := os.ReadFile(path) // follows links: the image gets the file itself
		if err != nil {
			return err
		}
		files = append(files, cluster.File{Name: strings.TrimPrefix(path, "/"), Mode: mode, Body: body})
		return nil
	}
	for _, prog := range programs {
		if err := add(prog, 0o755); err != nil {
			return nil, err
		}
		out, err := exec.Command("ldd", prog).Output()
		if err != nil {
			return nil, fmt.Errorf("ldd %s: %w", prog, err)
		}
		for _, lib := range lddPaths(string(out)) {
			if err := add(lib, 0o755); err != nil {
				return nil, err
			}
		}
	}
	return files, nil
}

// lddPaths are the files of ldd's output: "libz.so.1 => /lib/.../libz.so.1
// (0x...)" and the loader's "/lib64/ld-linux-x86-64.so.2 (0x...)"; the vDSO
// has no file.
func lddPaths(out string) []string {
	var paths []string
	for _, line := range strings.Split(out, "\n") {
		fields := strings.Fields(line)
		switch {
		case len(fields) >= 3 && fields[1] == "=>" && strings.HasPrefix(fields[2], "/"):
			paths = append(paths, fields[2])
		case len(fields) >= 1 && strings.HasPrefix(fields[0], "/"):
			paths = append(paths, fields[0])
		}
	}
	return paths
}

// nginxConf serves /healthz for readiness and /big, 256 KiB sent at
// 512 KiB/s (half a second: a download in flight when the job's stop
// comes), from a read-only root: every file it writes is below /tmp.
const nginxConf = `daemon off;
pid /tmp/nginx.pid;
error_log stderr notice;
worker_processes 1;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path /tmp/body;
  proxy_temp_path /tmp/proxy;
  fastcgi_temp_path /tmp/fastcgi;
  uwsgi_temp_path /tmp/uwsgi;
  scgi_temp_path /tmp/scgi;
  server {
    listen 127.0.0.1:18080;
    location = /healthz { return 200 "ok\n"; }
    location = /big { root /srv; limit_rate 512k; }
    location / { return 200 "hello from nginx\n"; }
  }
}
`

// bigSize is /big's size.
const bigSize = 256 << 10

// haproxyCfg: logs to stderr, monitor-uri for readiness, and a backend, the
// nginx above, for the ordering case.
const haproxyCfg = `global
  log stderr format raw local0 info
defaults
  mode http
  log global
  timeout connect 1s
  timeout client 30s
  timeout server 30s
frontend fe
  bind 127.0.0.1:18081
  monitor-uri /healthz
  default_backend be
backend be
  server web 127.0.0.1:18080
`

// realSidecarImages are the images of the real sidecars, as their
// official images are set up: the proxy as user 65532 on a scratch image
// (credentials: a dummy token from the environment, as workload identity
// would give one); nginx with STOPSIGNAL SIGQUIT, haproxy with SIGUSR1.
func realSidecarImages() ([]cluster.Image, error) {
	proxy, err := cloudSQLProxyBinary()
	if err != nil {
		return nil, err
	}
	proxyBody, err := os.ReadFile(proxy)
	if err != nil {
		return nil, err
	}
	etc := []cluster.File{
		{Name: "etc/passwd", Mode: 0o644, Body: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\nnobody:x:65534:65534:nobody:/:/sbin/nologin\n")},
		{Name: "etc/group", Mode: 0o644, Body: []byte("root:x:0:\nnonroot:x:65532:\nnogroup:x:65534:\n")},
		{Name: "tmp", Mode: 0o1777, Dir: true},
	}
	nginx, err := dynamicFiles("/usr/sbin/nginx")
	if err != nil {
		return nil, err
	}
	nginx = append(append(nginx, etc...),
		cluster.File{Name: "etc/nginx/nginx.conf", Mode: 0o644, Body: []byte(nginxConf)},
		cluster.File{Name: "srv/big", Mode: 0o644, Body: make([]byte, bigSize)})
	haproxy, err := dynamicFiles("/usr/sbin/haproxy")
	if err != nil {
		return nil, err
	}
	haproxy = append(append(haproxy, etc...),
		cluster.File{Name: "usr/local/etc/haproxy/haproxy.cfg", Mode: 0o644, Body: []byte(haproxyCfg)})
	return []cluster.Image{
		{Ref: cloudSQLImage, Entrypoint: []string{"/cloud-sql-proxy"}, User: "65532:65532",
			Env:   []string{"CSQL_PROXY_TOKEN=dummy"},
			Files: []cluster.File{{Name: "cloud-sql-proxy", Mode: 0o755, Body: proxyBody}}},
		{Ref: nginxImage, Entrypoint: []string{"/usr/sbin/nginx", "-p", "/tmp/", "-c", "/etc/nginx/nginx.conf", "-e", "stderr"},
			User: "65532:65532", StopSignal: "SIGQUIT", Files: nginx},
		{Ref: haproxyImage, Entrypoint: []string{"/usr/sbin/haproxy", "-W", "-db", "-f", "/usr/local/etc/haproxy/haproxy.cfg"},
			User: "65532:65532", StopSignal: "SIGUSR1", Files: haproxy},
	}, nil
}
