package inject

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/job-signal/job-signal/signalfs/sidecarspec"
)

// The known-sidecar rows checked against the real programs, where they run
// on this machine (apt's nginx, haproxy, pgbouncer, postgres; `go install`
// of cloud-sql-proxy): the endpoints inject derives answer, and the stop
// inject chooses ends the program with 0. A test skips when its program is
// not installed.

// freePort asks the kernel for a free loopback port.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// need finds a program or skips.
func need(t *testing.T, program string) string {
	t.Helper()
	path, err := exec.LookPath(program)
	if err != nil {
		t.Skipf("%s is not installed (see the README's known-sidecar table for how to get it)", program)
	}
	return path
}

// start runs a sidecar, stopped by PID when the test ends.
func start(t *testing.T, dir string, argv ...string) (*exec.Cmd, chan error) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, _ := os.Create(filepath.Join(dir, "sidecar.log"))
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); out.Close() }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	})
	return cmd, done
}

// waitReady polls an http:// readiness URL or a HOST:PORT, within 20s.
func waitReady(t *testing.T, dir, target string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	client := &http.Client{Timeout: time.Second}
	for time.Now().Before(deadline) {
		if strings.HasPrefix(target, "http://") {
			if resp, err := client.Get(target); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return
				}
			}
		} else if c, err := net.DialTimeout("tcp", target, time.Second); err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond) // polling an outside program's readiness, bounded by the deadline
	}
	log, _ := os.ReadFile(filepath.Join(dir, "sidecar.log"))
	t.Fatalf("%s not ready within 20s:\n%s", target, log)
}

// stopWith sends the row's stop signal to the program's process group, as
// sidecar-watch does, and wants exit 0.
func stopWith(t *testing.T, dir string, cmd *exec.Cmd, done chan error, row string) {
	t.Helper()
	k := rowNamed(t, row)
	sig, err := sidecarspec.StopSignal(k.StopSignal)
	if err != nil {
		t.Fatal(err)
	}
	syscall.Kill(-cmd.Process.Pid, sig)
	expectExit0(t, dir, done, fmt.Sprintf("%s after SIG%s", row, k.StopSignal))
}

func expectExit0(t *testing.T, dir string, done chan error, what string) {
	t.Helper()
	select {
	case err := <-done:
		done <- err // for the cleanup, which waits on done: before any Fatalf
		if err != nil {
			log, _ := os.ReadFile(filepath.Join(dir, "sidecar.log"))
			t.Fatalf("%s: %v, want exit 0:\n%s", what, err, log)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: still running after 20s", what)
	}
}

func rowNamed(t *testing.T, name string) *KnownSidecar {
	t.Helper()
	for i := range KnownSidecars {
		if KnownSidecars[i].Name == name {
			return &KnownSidecars[i]
		}
	}
	t.Fatalf("no row %q", name)
	return nil
}

func TestRealNginx(t *testing.T) {
	nginx := need(t, "nginx")
	dir, port := t.TempDir(), freePort(t)
	os.MkdirAll(filepath.Join(dir, "tmp"), 0o777)
	conf := fmt.Sprintf(`daemon off; pid nginx.pid; error_log stderr notice; worker_processes 1;
events { worker_connections 16; }
http { access_log off; client_body_temp_path tmp/body; proxy_temp_path tmp/proxy; fastcgi_temp_path tmp/fastcgi;
  uwsgi_temp_path tmp/uwsgi; scgi_temp_path tmp/scgi;
  server { listen 127.0.0.1:%d; location = /healthz { return 200 "ok\n"; } } }
`, port)
	os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(conf), 0o644)
	cmd, done := start(t, dir, nginx, "-p", dir+"/", "-c", filepath.Join(dir, "nginx.conf"), "-e", "stderr")
	waitReady(t, dir, fmt.Sprintf("http://127.0.0.1:%d/healthz", port))
	stopWith(t, dir, cmd, done, "nginx")
}

func TestRealHAProxy(t *testing.T) {
	haproxy := need(t, "haproxy")
	dir, port := t.TempDir(), freePort(t)
	cfg := fmt.Sprintf("global\n  log stderr format raw local0 info\ndefaults\n  mode http\n  timeout connect 1s\n  timeout client 5s\n  timeout server 5s\nfrontend fe\n  bind 127.0.0.1:%d\n  monitor-uri /healthz\n", port)
	os.WriteFile(filepath.Join(dir, "haproxy.cfg"), []byte(cfg), 0o644)
	cmd, done := start(t, dir, haproxy, "-W", "-db", "-f", filepath.Join(dir, "haproxy.cfg"))
	waitReady(t, dir, fmt.Sprintf("http://127.0.0.1:%d/healthz", port))
	// SIGUSR1 to the whole group, as sidecar-watch sends it, reaches the
	// worker twice: straight, and passed on by the master. The second can
	// land after the worker's soft stop has begun and end it by the signal
	// (the master then exits 138: about 1 run in 15 here). sidecar-watch
	// counts either as stopped, so either passes here; anything else fails.
	k := rowNamed(t, "haproxy")
	sig, err := sidecarspec.StopSignal(k.StopSignal)
	if err != nil {
		t.Fatal(err)
	}
	syscall.Kill(-cmd.Process.Pid, sig)
	select {
	case err := <-done:
		done <- err // for the cleanup
		var exit *exec.ExitError
		if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 128+int(sig)) {
			log, _ := os.ReadFile(filepath.Join(dir, "sidecar.log"))
			t.Fatalf("haproxy after SIG%s: %v, want exit 0 or %d:\n%s", k.StopSignal, err, 128+int(sig), log)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("haproxy after SIG%s: still running after 20s", k.StopSignal)
	}
}

// openDir is a directory the postgres user can enter (t.TempDir's parents
// are private to root).
func openDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "inject-real-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// asPostgres runs argv as the postgres user, which pgbouncer and postgres
// need when the tests run as root.
func asPostgres(t *testing.T, dir string, argv ...string) []string {
	t.Helper()
	if os.Geteuid() != 0 {
		return argv
	}
	setpriv := need(t, "setpriv")
	if err := exec.Command("chown", "-R", "postgres:postgres", dir).Run(); err != nil {
		t.Skipf("no postgres user to run as: %v", err)
	}
	return append([]string{setpriv, "--reuid", "postgres", "--regid", "postgres", "--init-groups", "--"}, argv...)
}

func TestRealPgbouncer(t *testing.T) {
	pgbouncer := need(t, "pgbouncer")
	dir, port := openDir(t), freePort(t)
	ini := fmt.Sprintf("[databases]\npostgres = host=127.0.0.1 port=1 dbname=postgres\n[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = %d\nunix_socket_dir =\nauth_type = trust\nauth_file = %s/userlist.txt\n", port, dir)
	os.WriteFile(filepath.Join(dir, "pgbouncer.ini"), []byte(ini), 0o644)
	os.WriteFile(filepath.Join(dir, "userlist.txt"), []byte(`"postgres" ""`+"\n"), 0o644)
	cmd, done := start(t, dir, asPostgres(t, dir, pgbouncer, filepath.Join(dir, "pgbouncer.ini"))...)
	waitReady(t, dir, "127.0.0.1:"+strconv.Itoa(port))
	stopWith(t, dir, cmd, done, "pgbouncer")
}

func TestRealPostgres(t *testing.T) {
	bin := "/usr/lib/postgresql/15/bin"
	if _, err := os.Stat(filepath.Join(bin, "postgres")); err != nil {
		t.Skip("postgres 15 is not installed")
	}
	dir, port := openDir(t), freePort(t)
	data := filepath.Join(dir, "data")
	argv := asPostgres(t, dir, filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-N")
	initdb := exec.Command(argv[0], argv[1:]...)
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	cmd, done := start(t, dir, asPostgres(t, dir, filepath.Join(bin, "postgres"), "-D", data, "-k", dir, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off")...)
	waitReady(t, dir, "127.0.0.1:"+strconv.Itoa(port))
	stopWith(t, dir, cmd, done, "postgres")
}

func TestRealCloudSQLProxy(t *testing.T) {
	proxy := need(t, "cloud-sql-proxy")
	dir := t.TempDir()
	line := []string{proxy, "--health-check", "--http-port", strconv.Itoa(freePort(t)), "--quitquitquit", "--admin-port", strconv.Itoa(freePort(t)),
		"--token", "dummy", "--port", strconv.Itoa(freePort(t)), "proj:region:inst"}
	k := knownSidecar("gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.27.0")
	ready, quit := fromTable(k.Ready, line, nil), fromTable(k.Quit, line, nil)
	if ready == "" || quit == "" {
		t.Fatalf("no endpoints derived from %q: ready %q, quit %q", line, ready, quit)
	}
	_, done := start(t, dir, line...)
	waitReady(t, dir, ready)
	resp, err := http.Post(quit, "text/plain", nil)
	if err != nil {
		t.Fatalf("POST %s: %v", quit, err)
	}
	resp.Body.Close()
	expectExit0(t, dir, done, "cloud-sql-proxy after POST "+quit)
}
