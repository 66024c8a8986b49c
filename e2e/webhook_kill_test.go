//go:build e2e

package e2e

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/job-signal/job-signal/inject"
)

// TestWebhookReplicaKill: two replicas of the webhook behind one address,
// and one of them killed (SIGKILL, by its PID) in the middle of a burst of
// n Jobs with a classic sidecar (E2E_WEBHOOK_KILL_JOBS: make bench asks
// for 50, what the one node runs at once; 20 by default, beside the other
// tests of make e2e). No Job Pod is admitted without job-signal;
// every creation refused meanwhile is refused in one line, either by the
// webhook ("cannot inject this Pod yet") or by the API server for the
// call the killed replica never answered ("failed calling webhook":
// failurePolicy Fail), and the Job controller creates the Pod again; every
// Job completes.
//
// The one address is what a Service gives a Deployment's replicas: a
// round-robin TCP front on 127.0.0.1 in the test (roundRobin), which
// sends each new connection to the next replica that accepts it, as
// kube-proxy does once the dead Pod has left the Service's endpoints.
// Connections open to the killed replica break, as they do through a
// Service.
func TestWebhookReplicaKill(t *testing.T) {
	t.Parallel()
	n := 20
	if v, err := strconv.Atoi(os.Getenv("E2E_WEBHOOK_KILL_JOBS")); err == nil && v > 0 {
		n = v
	}
	s := newSpace(t, "webhook-kill", map[string]string{inject.LabelInject: "enabled"})
	replicas := []*webhookProcess{startWebhook(t, "--log-level=info"), startWebhook(t, "--log-level=info")}
	front := roundRobin(t, replicas[0].addr, replicas[1].addr)
	registerWebhook(t, front, s.ns)

	var names []string
	for i := range n {
		job := baselineJob(fmt.Sprintf("kill-%d", i), false)
		job.Spec.BackoffLimit = nil // the default, 6: a Pod that failed to start is not the test's point
		created, _ := s.createJob(job)
		names = append(names, created.Name)
	}
	// Kill the replica that has injected more, once a third of the Pods
	// are injected: the burst is under way, and it is serving.
	injected := func(w *webhookProcess) int {
		count := 0
		for _, e := range w.events(t) {
			if e.Msg == "injected" && e.Namespace == s.ns {
				count++
			}
		}
		return count
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		a, b := injected(replicas[0]), injected(replicas[1])
		if a+b >= n/3 {
			victim := replicas[0]
			if b > a {
				victim = replicas[1]
			}
			if err := victim.cmd.Process.Kill(); err != nil { // SIGKILL to its PID
				t.Fatal(err)
			}
			t.Logf("killed the replica at %s after the replicas injected %d and %d Pods", victim.addr, a, b)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 3 minutes the replicas have injected %d and %d Pods of %d Jobs", a, b, n)
		}
		time.Sleep(20 * time.Millisecond) // a log file has no watch here: poll it, bounded
	}

	for _, name := range names {
		done, _ := s.waitJob(name, 10*time.Minute)
		expectJob(t, done, batchv1.JobComplete, batchv1.JobReasonCompletionsReached, 1, 0)
	}
	pods := 0
	for _, o := range s.pods.latest() {
		pods++
		if uninjected(o.obj) {
			t.Errorf("Pod %s was admitted without job-signal: %s", o.obj.Name, podSummary(o.obj))
		}
	}
	refusals := map[string]int{}
	for job, messages := range s.failedCreates() {
		for _, m := range messages {
			kind := "other"
			switch {
			case strings.ContainsAny(m, "\r\n"):
				kind = "more than one line"
			case strings.Contains(m, "cannot inject this Pod yet"):
				kind = "denied for now by the webhook"
			case strings.Contains(m, "failed calling webhook"):
				kind = "the call failed (failurePolicy Fail)"
			}
			refusals[kind]++
			if kind == "other" || kind == "more than one line" {
				t.Errorf("Job %s: a refusal that is not a one-line denial for now: %q", job, m)
			}
		}
	}
	t.Logf("E2E_TIMING webhook_kill jobs=%d pods=%d refusals=%v", n, pods, refusals)
}

// roundRobin listens on 127.0.0.1 and relays each connection to the next
// of backends that accepts it, byte for byte (TLS passes through); it
// stops when the test ends. It returns its address.
func roundRobin(t *testing.T, backends ...string) string {
	t.Helper()
	addr, set := roundRobinLater(t)
	set(backends...)
	return addr
}

// roundRobinLater is roundRobin before its backends are known: connections
// before set are closed at once.
func roundRobinLater(t *testing.T) (addr string, set func(backends ...string)) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var backendList atomic.Pointer[[]string]
	backendList.Store(&[]string{})
	var next atomic.Uint64
	var mu sync.Mutex
	open := map[net.Conn]bool{}
	track := func(c net.Conn, add bool) bool {
		mu.Lock()
		defer mu.Unlock()
		if add && open == nil {
			return false // stopped
		}
		if add {
			open[c] = true
		} else {
			delete(open, c)
		}
		return true
	}
	relay := func(client net.Conn) {
		defer client.Close()
		backends := *backendList.Load()
		first := next.Add(1)
		var server net.Conn
		for i := range uint64(len(backends)) {
			c, err := net.DialTimeout("tcp", backends[(first+i)%uint64(len(backends))], 2*time.Second)
			if err == nil {
				server = c
				break
			}
		}
		if server == nil || !track(server, true) {
			return
		}
		defer track(server, false)
		defer server.Close()
		// Either side's end ends both, as a connection to a killed Pod
		// ends for its client.
		done := make(chan struct{}, 2)
		pipe := func(to, from net.Conn) {
			io.Copy(to, from)
			done <- struct{}{}
		}
		go pipe(server, client)
		go pipe(client, server)
		<-done
		client.Close()
		server.Close()
		<-done
	}
	go func() {
		for {
			c, err := l.Accept()
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if err != nil {
				continue
			}
			if !track(c, true) {
				c.Close()
				return
			}
			go func() {
				defer track(c, false)
				relay(c)
			}()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for c := range open {
			c.Close()
		}
		open = nil
	})
	return l.Addr().String(), func(backends ...string) { backendList.Store(&backends) }
}
