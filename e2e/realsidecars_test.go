//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// Real sidecar programs (realimages_test.go) as Jobs through the API, each
// judged by the Job controller with the main's exit code.

// tmpVolume is a writable /tmp in every container of the Pod: nginx writes
// its pid and temporary files there, on a read-only root.
var tmpVolume = corev1.Volume{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}

// cloudSQLProxySidecar is the Cloud SQL Auth Proxy as manifests/ runs it:
// ready when its own /startup says so, stopped through its /quitquitquit.
// Offline it accepts a connection, fails to fetch the instance's details,
// and closes it.
func cloudSQLProxySidecar() sidecar {
	return sidecar{
		name: "cloud-sql-proxy", image: cloudSQLImage,
		flags: []string{"--ready-http=http://127.0.0.1:9090/startup", "--quit-url=http://127.0.0.1:9091/quitquitquit"},
		command: []string{"/cloud-sql-proxy", "--port=5432", "--health-check", "--http-address=127.0.0.1",
			"--quitquitquit", "my-project:europe-west1:inventory"},
	}
}

// nginxSidecar is nginx with its graceful stop (QUIT), ready on /healthz.
func nginxSidecar(flags ...string) sidecar {
	return sidecar{
		name: "nginx", image: nginxImage,
		flags:   append([]string{fmt.Sprintf("--ready-http=http://127.0.0.1:%d/healthz", nginxPort), "--stop-signal=QUIT"}, flags...),
		command: []string{"/usr/sbin/nginx", "-p", "/tmp/", "-c", "/etc/nginx/nginx.conf", "-e", "stderr"},
	}
}

// haproxySidecar is haproxy in master-worker mode (as its official image
// runs it) with its soft stop (USR1), ready on its monitor-uri.
func haproxySidecar(flags ...string) sidecar {
	return sidecar{
		name: "haproxy", image: haproxyImage,
		flags:   append([]string{fmt.Sprintf("--ready-http=http://127.0.0.1:%d/healthz", haproxyPort), "--stop-signal=USR1"}, flags...),
		command: []string{"/usr/sbin/haproxy", "-W", "-db", "-f", "/usr/local/etc/haproxy/haproxy.cfg"},
	}
}

// TestRealCloudSQLProxy: the main connects to the database port through
// the proxy, then exits with its code; the Job's verdict follows that code,
// the proxy is stopped through its quit URL and exits 0.
func TestRealCloudSQLProxy(t *testing.T) {
	t.Parallel()
	for _, code := range []int32{0, 3} {
		t.Run(fmt.Sprintf("main-exits-%d", code), func(t *testing.T) {
			t.Parallel()
			s := newSpace(t, "cloud-sql-proxy")
			w := wrapped{name: "db-job",
				main:     []string{"sh", "-c", fmt.Sprintf(`echo 'SELECT 1;' | nc 127.0.0.1 5432 && echo connected through the proxy; exit %d`, code)},
				sidecars: []sidecar{cloudSQLProxySidecar()}}
			want, phase := completeWithOnePod, corev1.PodSucceeded
			if code != 0 {
				want, phase = failedWithOnePod(batchv1.JobReasonBackoffLimitExceeded), corev1.PodFailed
			}
			_, pods := s.run(w.job(), want, 3*time.Minute)
			expectPhase(t, pods[0], phase)
			expectExits(t, pods[0], map[string]int32{"main": code})
			expectLog(t, s, pods[0].Name, "main", "connected through the proxy")
			expectLog(t, s, pods[0].Name, "cloud-sql-proxy", "Accepted connection from 127.0.0.1")
			expectLog(t, s, pods[0].Name, "cloud-sql-proxy", "/quitquitquit received request")
			expectQuitByURL(t, s, pods[0].Name, "cloud-sql-proxy")
		})
	}
}

// expectQuitByURL: sidecar-watch stopped the sidecar through its quit URL,
// and the sidecar exited 0 then.
func expectQuitByURL(t *testing.T, s *space, pod, container string) {
	t.Helper()
	log := s.logs(pod, container)
	for _, ev := range slogEvents(log) {
		if ev.msg == msgSidecarStopped {
			if ev.fields["via"] != "quit-url" || ev.fields["status"] != "exited with code 0" {
				t.Errorf("%s: stopped via %q with status %q, want via the quit URL with exit 0; its log:\n%s", container, ev.fields["via"], ev.fields["status"], log)
			}
			return
		}
	}
	t.Errorf("%s: sidecar-watch never logged %q; its log:\n%s", container, msgSidecarStopped, log)
}

// TestRealNginxHaproxyOrdered: haproxy starts only once nginx, its backend,
// is ready (--after); the main starts once both are, and downloads a file
// from nginx through haproxy; at the end haproxy stops first (USR1, its
// soft stop), then nginx (QUIT, --stop-after haproxy). The Job completes
// with the main's code.
func TestRealNginxHaproxyOrdered(t *testing.T) {
	t.Parallel()
	s := newSpace(t, "nginx-haproxy")
	w := wrapped{name: "download",
		main: []string{"sh", "-c", fmt.Sprintf(`n=$(wget -q -O - http://127.0.0.1:%d/big | wc -c) && echo "downloaded $n bytes through haproxy" && [ "$n" -eq %d ]`, haproxyPort, bigSize)},
		sidecars: []sidecar{
			haproxySidecar("--after=nginx"),
			nginxSidecar("--stop-after=haproxy"),
		},
		volumes: []corev1.Volume{tmpVolume},
	}
	_, pods := s.run(w.job(), completeWithOnePod, 3*time.Minute)
	pod := pods[0]
	expectPhase(t, pod, corev1.PodSucceeded)
	expectExits(t, pod, nil)
	expectLog(t, s, pod.Name, "main", fmt.Sprintf("downloaded %d bytes through haproxy", bigSize))
	nginx, haproxy, main := s.logs(pod.Name, "nginx"), s.logs(pod.Name, "haproxy"), s.logs(pod.Name, "main")
	nginxReady := eventTime(t, "nginx", nginx, msgSidecarReady)
	haproxyStarted := eventTime(t, "haproxy", haproxy, msgSidecarStarted)
	haproxyReady := eventTime(t, "haproxy", haproxy, msgSidecarReady)
	mainStarted := eventTime(t, "main", main, msgCommandStarted)
	haproxyStopped := eventTime(t, "haproxy", haproxy, msgSidecarStopped, msgSidecarKilled)
	nginxStopping := eventTime(t, "nginx", nginx, msgSentStopSignal)
	at := func(tm time.Time) string { return tm.Format(time.StampMilli) }
	if haproxyStarted.Before(nginxReady) {
		t.Errorf("haproxy started at %s, before nginx was ready at %s", at(haproxyStarted), at(nginxReady))
	}
	if mainStarted.Before(haproxyReady) {
		t.Errorf("the main command started at %s, before haproxy was ready at %s", at(mainStarted), at(haproxyReady))
	}
	if nginxStopping.Before(haproxyStopped) {
		t.Errorf("nginx was signalled at %s, before haproxy had stopped at %s", at(nginxStopping), at(haproxyStopped))
	}
	for name, log := range map[string]string{"nginx": nginx, "haproxy": haproxy} {
		for _, ev := range slogEvents(log) {
			if ev.msg == msgSidecarStopped && ev.fields["via"] != "signal" {
				t.Errorf("%s stopped via %q, want its stop signal", name, ev.fields["via"])
			}
		}
	}
}

// TestRealHaproxyPodDeleted: the Pod is deleted while the main runs. The
// runtime stops each container with its image's STOPSIGNAL: SIGUSR1 for
// haproxy's, as the official image declares. That signal reaches
// sidecar-watch, which must take it for what it is there, the Pod
// terminating: haproxy keeps serving until the main is done (the main's
// last request goes through it), and is then stopped once.
func TestRealHaproxyPodDeleted(t *testing.T) {
	t.Parallel()
	s := newSpace(t, "haproxy-deleted")
	const grace = 30
	w := wrapped{name: "deleted", grace: grace,
		// After TERM the main still needs haproxy for 2 s: 20 requests, 0.1 s apart.
		main: []string{"sh", "-c", fmt.Sprintf(`trap 'echo main got TERM; ok=0; for i in $(seq 20); do wget -q -O /dev/null http://127.0.0.1:%d/healthz && ok=$((ok+1)); sleep 0.1; done; echo "haproxy answered $ok of 20"; exit 0' TERM; `+
			`echo main working; while true; do sleep 1 & wait $!; done`, haproxyPort)},
		sidecars: []sidecar{haproxySidecar()},
	}
	job := w.job()
	job.Spec.PodReplacementPolicy = ptr.To(batchv1.Failed) // the verdict follows the Pod's phase
	created, _ := s.createJob(job)
	pod := s.waitMainLogged(created, "main working")
	logs := s.followLogs(pod, "main", "haproxy")
	deleted := time.Now()
	if err := kube.Client().CoreV1().Pods(s.ns).Delete(s.ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete Pod: %v", err)
	}
	done, _ := s.waitJob(created.Name, 2*time.Minute)
	expectJob(t, done, batchv1.JobComplete, batchv1.JobReasonCompletionsReached, 1, 0)
	final := s.jobPods(done, 1)[0]
	expectPhase(t, final, corev1.PodSucceeded)
	expectExits(t, final, nil)
	for _, c := range final.Status.ContainerStatuses {
		// The main takes about 2 s after TERM; the kubelet's SIGKILL would
		// come at the grace period's end.
		if end := c.State.Terminated.FinishedAt.Time; end.Sub(deleted) > grace/2*time.Second {
			t.Errorf("container %s finished %v after the deletion: was it killed at the grace period's end?", c.Name, end.Sub(deleted))
		}
	}
	got := logs.wait(t)
	if !strings.Contains(got["main"], "haproxy answered 20 of 20") {
		t.Errorf("haproxy did not keep serving the main after the Pod's deletion; main's log:\n%s", got["main"])
	}
	terminating, starts := false, 0
	for _, ev := range slogEvents(got["haproxy"]) {
		terminating = terminating || ev.msg == msgPodTerminating && strings.Contains(ev.fields["signal"], "USR1")
		if ev.msg == msgSidecarStarted {
			starts++
		}
	}
	if !terminating || starts != 1 {
		t.Errorf("want sidecar-watch to take the runtime's SIGUSR1 as the Pod terminating and start haproxy once; started %d times; its log:\n%s", starts, got["haproxy"])
	}
}
