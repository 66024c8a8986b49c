package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/job-signal/job-signal/e2e/cluster"
	"github.com/job-signal/job-signal/internal/testing/fake"
	"github.com/job-signal/job-signal/signalfs"
)

// realSetup is a sidecar program and the sidecar-watch flags that stop it
// its own way.
type realSetup struct {
	label   string
	missing string                                             // why it cannot run here ("" if it can)
	prepare func(dir string) (flags, argv []string, err error) // for one run, in its own folder
}

// stopRealSidecars measures job exit to the sidecar's exit, with real
// sidecar programs stopped their own way, next to `sleep` stopped with
// TERM: the job's fake stamps the moment before it exits, the harness the
// moment the sidecar's process has exited (its pidfd turns readable).
func (b *bench) stopRealSidecars(runs int) error {
	for _, s := range []realSetup{sleepSetup(), cloudSQLProxySetup(), nginxSetup()} {
		title := "stop latency to the sidecar's exit, " + s.label
		if s.missing != "" {
			b.rows = append(b.rows, row{name: title, value: "skipped: " + s.missing})
			continue
		}
		samples, err := b.sample(title, runs, func(run int) (time.Duration, error) { return b.realStopOnce(run, s) })
		if err != nil {
			return err
		}
		r := newRow(title, samples)
		r.note = "to the sidecar's own exit, not to its signal: includes the program's shutdown"
		b.rows = append(b.rows, r)
	}
	return nil
}

func (b *bench) realStopOnce(run int, s realSetup) (time.Duration, error) {
	runDir := filepath.Join(b.work, fmt.Sprintf("real-stop-%d", run))
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return 0, err
	}
	defer os.RemoveAll(runDir)
	flags, argv, err := s.prepare(runDir)
	if err != nil {
		return 0, err
	}
	dirPath := filepath.Join(runDir, "signal")
	dir, err := signalfs.Open(dirPath, true)
	if err != nil {
		return 0, err
	}
	common := append([]string{"--dir", dirPath}, quiet...)
	sc, err := start(b.path("sidecar-watch"), append(append(append([]string{"--name", "real"}, flags...), common...), append([]string{"--"}, argv...)...)...)
	if err != nil {
		return 0, err
	}
	var child int
	if err := until("the real sidecar ready", func() bool {
		st, found, err := dir.ReadSidecar("real")
		child = st.ChildPID
		return err == nil && found && st.Phase == signalfs.SidecarReady && child != 0
	}); err != nil {
		return 0, err
	}
	exited, err := watchExit(child)
	if err != nil {
		return 0, err
	}
	exitStamp := filepath.Join(runDir, "job-exit")
	job, err := start(b.path("job-signal"), append(common, "--", b.path("fake"), "-events", exitStamp, "-exit", "0")...)
	if err != nil {
		return 0, err
	}
	if err := job.wait(); err != nil {
		return 0, fmt.Errorf("job-signal: %w", err)
	}
	if err := sc.wait(); err != nil {
		return 0, fmt.Errorf("sidecar-watch: %w", err)
	}
	var gone time.Time
	select {
	case gone = <-exited:
	case <-time.After(waitLimit):
		return 0, errors.New("the sidecar's pidfd never turned readable")
	}
	at, err := fake.FirstOf(exitStamp, "exit")
	if err != nil {
		return 0, err
	}
	return gone.Sub(at), nil
}

// watchExit stamps the moment process pid exits: a pidfd turns readable
// then (it need not be our child).
func watchExit(pid int) (<-chan time.Time, error) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nil, fmt.Errorf("pidfd_open %d: %w", pid, err)
	}
	out := make(chan time.Time, 1)
	go func() {
		defer unix.Close(fd)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(fds, int(waitLimit/time.Millisecond))
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if n > 0 {
				out <- time.Now()
			}
			return
		}
	}()
	return out, nil
}

// sleepSetup is the reference: a program that exits on TERM at once.
func sleepSetup() realSetup {
	sleep, err := exec.LookPath("sleep")
	s := realSetup{label: "`sleep`, TERM (reference)"}
	if err != nil {
		s.missing = "no sleep in PATH"
	}
	s.prepare = func(string) ([]string, []string, error) { return nil, []string{sleep, "3600"}, nil }
	return s
}

// cloudSQLProxySetup is the Cloud SQL Auth Proxy (the binary make e2e
// builds into its cache, or one in PATH), offline with a dummy token,
// ready on its /startup check and stopped through /quitquitquit.
func cloudSQLProxySetup() realSetup {
	s := realSetup{label: "Cloud SQL Auth Proxy, --quit-url (/quitquitquit)"}
	bin, err := exec.LookPath("cloud-sql-proxy")
	if err != nil {
		if cache, err := cluster.DefaultCache(); err == nil {
			found, _ := filepath.Glob(filepath.Join(cache, "cloud-sql-proxy-v*", "cloud-sql-proxy"))
			if len(found) > 0 {
				bin = found[len(found)-1]
			}
		}
	}
	if bin == "" {
		s.missing = "no cloud-sql-proxy in PATH or in the e2e cache (make e2e builds it)"
		return s
	}
	s.prepare = func(string) ([]string, []string, error) {
		ports, err := freePorts(3)
		if err != nil {
			return nil, nil, err
		}
		db, health, admin := strconv.Itoa(ports[0]), strconv.Itoa(ports[1]), strconv.Itoa(ports[2])
		flags := []string{"--ready-http", "http://127.0.0.1:" + health + "/startup", "--quit-url", "http://127.0.0.1:" + admin + "/quitquitquit"}
		argv := []string{bin, "proj:region:inst", "--token", "dummy", "--port", db, "--health-check",
			"--http-address", "127.0.0.1", "--http-port", health, "--quitquitquit", "--admin-port", admin}
		return flags, argv, nil
	}
	return s
}

// nginxSetup is Debian's nginx in the foreground, its files below the
// run's folder, ready on /healthz and stopped with QUIT, its graceful stop.
func nginxSetup() realSetup {
	s := realSetup{label: "nginx, --stop-signal QUIT"}
	const bin = "/usr/sbin/nginx"
	if _, err := os.Stat(bin); err != nil {
		s.missing = "nginx is not installed (apt-get install nginx-light)"
		return s
	}
	s.prepare = func(dir string) ([]string, []string, error) {
		ports, err := freePorts(1)
		if err != nil {
			return nil, nil, err
		}
		conf := fmt.Sprintf(`daemon off;
pid nginx.pid;
error_log stderr error;
worker_processes 1;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path tmp/body;
  proxy_temp_path tmp/proxy;
  fastcgi_temp_path tmp/fastcgi;
  uwsgi_temp_path tmp/uwsgi;
  scgi_temp_path tmp/scgi;
  server {
    listen 127.0.0.1:%d;
    location = /healthz { return 200 "ok\n"; }
  }
}
`, ports[0])
		if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o755); err != nil {
			return nil, nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(conf), 0o644); err != nil {
			return nil, nil, err
		}
		flags := []string{"--ready-http", fmt.Sprintf("http://127.0.0.1:%d/healthz", ports[0]), "--stop-signal", "QUIT"}
		return flags, []string{bin, "-p", dir + "/", "-c", filepath.Join(dir, "nginx.conf"), "-e", "stderr"}, nil
	}
	return s
}

// freePorts are n loopback ports free at the moment, all different.
func freePorts(n int) ([]int, error) {
	var out []int
	for len(out) < n {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out, nil
}
