package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/job-signal/job-signal/internal/testing/hostileregistry"
	"github.com/job-signal/job-signal/internal/testing/procinfo"
	"github.com/job-signal/job-signal/internal/testing/testcert"
)

// The webhook as a process on 127.0.0.1, without a cluster: its admission
// latency against the previous build's (main's, built in the same run),
// and its peak RSS under a hostile registry and under concurrent requests
// of the largest size it accepts, against the 256 Mi memory limit it is
// shipped with.

// rssTarget is the peak RSS the webhook must stay under: a quarter of the
// shipped limit.
const rssTarget = 64 << 20

// maxRequest is the size of the largest AdmissionReview the webhook
// accepts (internal/webhook's maxBody).
const maxRequest = 4 << 20

// webhookProc is one running job-signal-webhook.
type webhookProc struct {
	p      *process
	url    string
	client *http.Client
}

// startWebhookProc runs bin on a free port with a fresh certificate and no
// API access, with env added to the environment; it returns once /healthz
// answers.
func (b *bench) startWebhookProc(bin string, env []string, args ...string) (*webhookProc, error) {
	dir, err := os.MkdirTemp(b.work, "webhook-")
	if err != nil {
		return nil, err
	}
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	cert, err := testcert.Write(certFile, keyFile, "bench")
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(bin, append([]string{"--listen=" + addr, "--tls-cert-file=" + certFile, "--tls-key-file=" + keyFile,
		"--log-level=error"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	p, err := startCmd(cmd)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	w := &webhookProc{p: p, url: "https://" + addr, client: &http.Client{Timeout: 30 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, MaxIdleConnsPerHost: 16}}}
	err = until(bin+" serving", func() bool {
		resp, err := w.client.Get(w.url + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == http.StatusOK
	})
	if err != nil {
		w.stop()
		return nil, err
	}
	return w, nil
}

func (w *webhookProc) stop() {
	syscall.Kill(-w.p.cmd.Process.Pid, syscall.SIGTERM)
	w.p.wait()
}

// peakRSS is the process's high-water mark of resident memory.
func (w *webhookProc) peakRSS() int64 {
	kib, _ := procinfo.StatusValue(w.p.cmd.Process.Pid, "VmHWM")
	return int64(kib) << 10
}

// review sends body to /mutate and returns how long the answer took and
// whether it allowed the Pod.
func (w *webhookProc) review(body []byte) (time.Duration, string, error) {
	took, r, status, err := w.answer(body)
	if err != nil || r == nil {
		return took, status, err
	}
	return took, outcomeOf(r), nil
}

// answer sends body to /mutate and returns how long the answer took and
// the response, or the HTTP status of an answer that is not 200.
func (w *webhookProc) answer(body []byte) (time.Duration, *admissionv1.AdmissionResponse, string, error) {
	start := time.Now()
	resp, err := w.client.Post(w.url+"/mutate", "application/json", bytes.NewReader(body))
	if err != nil {
		return 0, nil, "", err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	took := time.Since(start)
	if err != nil {
		return 0, nil, "", err
	}
	if resp.StatusCode != http.StatusOK {
		return took, nil, fmt.Sprintf("HTTP %d", resp.StatusCode), nil
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(out, &review); err != nil || review.Response == nil {
		return 0, nil, "", fmt.Errorf("not an AdmissionReview: %.200s", out)
	}
	return took, review.Response, "", nil
}

// outcomeOf names what a response did with the Pod.
func outcomeOf(r *admissionv1.AdmissionResponse) string {
	switch {
	case !r.Allowed:
		return "denied"
	case r.Patch == nil:
		return "unchanged"
	case bytes.Contains(r.Patch, []byte("job-signal.dev~1skipped")):
		return "skipped"
	}
	return "injected"
}

// benchReview is the AdmissionReview of a Job's Pod with a main container
// running image (with its command, or without one: looked up) and a
// sidecar; pad adds an environment value of that many bytes.
func benchReview(image string, command []string, pad int) []byte {
	pod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{GenerateName: "export-", Namespace: "batch",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "export", UID: "u1"}}},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{
			{Name: "export", Image: image, Command: command, Args: []string{"--once"}},
			{Name: "proxy", Image: "busybox:1.37", Command: []string{"/proxy"}},
		}},
	}
	if pad > 0 {
		pod.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "PAD", Value: strings.Repeat("x", pad)}}
	}
	return reviewOf(pod)
}

// referenceWebhook builds the previous build's webhook (git revision ref,
// main by default) into the work directory; "" and why when it cannot.
func (b *bench) referenceWebhook(ref string) (string, string) {
	src := filepath.Join(b.work, "reference-src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err.Error()
	}
	archive := exec.Command("git", "archive", ref)
	extract := exec.Command("tar", "-x", "-C", src)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		return "", err.Error()
	}
	extract.Stdin = pipe
	if err := extract.Start(); err != nil {
		return "", err.Error()
	}
	if err := archive.Run(); err != nil {
		extract.Wait()
		return "", fmt.Sprintf("git archive %s: %v", ref, err)
	}
	if err := extract.Wait(); err != nil {
		return "", err.Error()
	}
	bin := filepath.Join(b.work, "reference", "job-signal-webhook")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "./cmd/job-signal-webhook")
	build.Dir = src
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Sprintf("build %s's webhook: %v: %s", ref, err, out)
	}
	return bin, ""
}

// concurrently sends each body n at a time, rounds times, and counts the
// answers by kind; a request that fails counts as "failed", and the first
// failure is returned.
func (w *webhookProc) concurrently(bodies [][]byte, n, rounds int) (map[string]int, error) {
	var mu sync.Mutex
	counts := map[string]int{}
	var firstErr error
	for range rounds {
		var wg sync.WaitGroup
		for _, body := range bodies {
			for range n {
				wg.Go(func() {
					_, kind, err := w.review(body)
					mu.Lock()
					defer mu.Unlock()
					if err != nil {
						kind = "failed"
						if firstErr == nil {
							firstErr = err
						}
					}
					counts[kind]++
				})
			}
		}
		wg.Wait()
	}
	return counts, firstErr
}

// hostileRegistry serves every trick of internal/testing/hostileregistry.
func hostileRegistry() (*hostileregistry.Registry, error) { return hostileregistry.Serve() }
