package main

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"

	"github.com/job-signal/job-signal/internal/procfs"
	"github.com/job-signal/job-signal/internal/testing/webhooktest"
)

// cpuClients is how many clients send reviews at once: the API server's
// concurrency in the scale rows.
const cpuClients = 32

// webhookCPU measures the webhook process's CPU per Pod as an API server
// makes it work: both calls for each Pod of a Job with a sidecar (the
// first, and the second after the ServiceAccount admission), from 32
// clients at once over kept-alive HTTPS; this build and the previous one
// (ref), each a fresh process, in turns.
func (b *bench) webhookCPU(ref, refName, why string) error {
	pods := b.runs(2000)
	fmt.Fprintf(os.Stderr, "bench: webhook process: CPU per Pod, %d Pods from %d clients\n", pods, cpuClients)
	var mine, theirs []time.Duration
	for range 3 {
		for _, bin := range []string{b.path("job-signal-webhook"), ref} {
			if bin == "" {
				continue
			}
			perPod, err := b.cpuPerPod(bin, pods)
			if err != nil {
				return fmt.Errorf("webhook CPU per Pod, %s: %w", bin, err)
			}
			if bin == ref {
				theirs = append(theirs, perPod)
			} else {
				mine = append(mine, perPod)
			}
		}
	}
	r := newRow(fmt.Sprintf("webhook process: CPU per Pod, both calls, %d clients", cpuClients), mine)
	r.runs = len(mine)
	r.value = fmt.Sprintf("median %s (runs: %s)", human(r.p50), humans(mine))
	r.target = "≤ " + human(scaleCPUTarget)
	r.note = fmt.Sprintf("user and system time of the webhook process (/proc/PID/stat) over %d Pods, each the API server's two "+
		"AdmissionReviews for a defaulted Job Pod with a sidecar (internal/testing/webhooktest.APIServerPod and CalledAgain), "+
		"sent from %d clients at once over kept-alive HTTPS (HTTP/1.1), after 200 to warm up; the webhook at log level error; "+
		"three fresh processes of each build, in turns", pods, cpuClients)
	if ref == "" {
		r.reference = refName + "'s build: " + why
	} else {
		p := newRow("", theirs)
		r.reference = fmt.Sprintf("%s's build: median %s (runs: %s)", refName, human(p.p50), humans(theirs))
	}
	r.check = func(r row) (string, bool) {
		return fmt.Sprintf("%.2f× the target", ratio(r.p50, scaleCPUTarget)), r.p50 <= scaleCPUTarget
	}
	b.rows = append(b.rows, r)
	return nil
}

func humans(ds []time.Duration) string {
	out := ""
	for i, d := range ds {
		if i > 0 {
			out += ", "
		}
		out += human(d)
	}
	return out
}

// cpuPerPod runs bin and measures its CPU per Pod over pods Pods.
func (b *bench) cpuPerPod(bin string, pods int) (time.Duration, error) {
	w, err := b.startWebhookProc(bin, nil)
	if err != nil {
		return 0, err
	}
	defer w.stop()
	tr := w.client.Transport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = cpuClients // kept alive, as an API server keeps its connections
	tr.TLSClientConfig = &tls.Config{RootCAs: w.client.Transport.(*http.Transport).TLSClientConfig.RootCAs}
	w.client = &http.Client{Timeout: w.client.Timeout, Transport: tr}
	first := reviewOf(webhooktest.APIServerPod())
	_, resp, status, err := w.answer(first)
	if err != nil || resp == nil || resp.Patch == nil {
		return 0, fmt.Errorf("the first call: %s %v", status, err)
	}
	again, err := calledAgain(webhooktest.APIServerPod(), resp.Patch)
	if err != nil {
		return 0, err
	}
	send := func(n int) error {
		var wg sync.WaitGroup
		var mu sync.Mutex
		var firstErr error
		next := make(chan int)
		for range cpuClients {
			wg.Go(func() {
				for range next {
					for _, call := range []struct {
						body []byte
						want string
					}{{first, "injected"}, {again, "unchanged"}} {
						_, got, err := w.review(call.body)
						if err == nil && got != call.want {
							err = fmt.Errorf("answered %s, want %s", got, call.want)
						}
						if err != nil {
							mu.Lock()
							firstErr = cmpErr(firstErr, err)
							mu.Unlock()
						}
					}
				}
			})
		}
		for i := range n {
			next <- i
		}
		close(next)
		wg.Wait()
		return firstErr
	}
	if err := send(200); err != nil {
		return 0, err
	}
	before, err := procfs.ReadStat(w.p.cmd.Process.Pid)
	if err != nil {
		return 0, err
	}
	if err := send(pods); err != nil {
		return 0, err
	}
	after, err := procfs.ReadStat(w.p.cmd.Process.Pid)
	if err != nil {
		return 0, err
	}
	return time.Duration(after.UTime+after.STime-before.UTime-before.STime) * 10 * time.Millisecond / time.Duration(pods), nil
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// calledAgain is the AdmissionReview of the API server's second call for
// pod, given the first call's patch.
func calledAgain(pod *corev1.Pod, patch []byte) ([]byte, error) {
	raw, _ := json.Marshal(pod)
	p, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return nil, err
	}
	if raw, err = p.Apply(raw); err != nil {
		return nil, err
	}
	injected := &corev1.Pod{}
	if err := json.Unmarshal(raw, injected); err != nil {
		return nil, err
	}
	return reviewOf(webhooktest.CalledAgain(injected)), nil
}

// reviewOf is the AdmissionReview of pod's creation.
func reviewOf(pod *corev1.Pod) []byte {
	body, _ := webhooktest.ReviewBody(pod) // a Pod always marshals
	return body
}
