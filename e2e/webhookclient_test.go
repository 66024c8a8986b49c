//go:build e2e

package e2e

import (
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/job-signal/job-signal/internal/servingcert"
	"github.com/job-signal/job-signal/internal/testing/webhooktest"
)

// The webhook called as the API server calls it in a cluster, for the
// tests that measure it. The API server calls a webhook behind a Service
// over HTTP/1.1, through a pool that keeps at most 25 idle connections
// (client-go's transport), and so does it for a webhook registered by a
// URL, unless the URL's host is a loopback address or "localhost": those
// it calls with HTTP/2, one connection for every request
// (k8s.io/apiserver/pkg/util/webhook, client.go, on 1.30 as on 1.37). A
// webhook registered as https://127.0.0.1:PORT is therefore called as in
// no cluster; registered under this machine's host name, where that name
// is 127.0.0.1 (the same address, named as no rule of the API server's
// knows it), it is called as behind a Service. "localhost." would be
// such a name, but Go's resolver, the API server's, does not look a name
// with its final dot up in /etc/hosts. Its serving certificate is the one
// the chart's default has the webhook issue (shippedServingCert): each TLS
// handshake the API server opens costs the webhook one signature with
// its key.

// serviceLikeHost is the name the API server calls the webhook by: this
// machine's host name, when it is 127.0.0.1 (as /etc/hosts says on most
// machines); else the test is skipped, saying so.
func serviceLikeHost(t *testing.T) string {
	t.Helper()
	name, err := os.Hostname()
	if err == nil {
		var addrs []string
		if addrs, err = net.LookupHost(name); err == nil && slices.Contains(addrs, "127.0.0.1") && name != "localhost" {
			return name
		}
		err = fmt.Errorf("%s is %v", name, addrs)
	}
	t.Skipf("the API server calls a webhook as behind a Service only under a name other than localhost; this machine's host name is not 127.0.0.1 (%v): add it to /etc/hosts", err)
	return ""
}

// shippedServingCert is a CA and a serving certificate for
// serviceLikeHost, localhost and 127.0.0.1, issued as the chart's default
// (certificates.source: generate) issues them: by the webhook itself,
// servingcert.Issue, ECDSA P-256.
func shippedServingCert(t *testing.T) servingCert {
	t.Helper()
	issued, err := servingcert.Issue([]string{serviceLikeHost(t), "localhost", "job-signal-webhook.job-signal-system.svc", "127.0.0.1"},
		24*time.Hour, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return servingCert{
		cert: issued.Pair.CertPEM,
		key:  issued.Pair.KeyPEM,
		ca:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: issued.CA.Raw}),
	}
}

// freeLoopbackPort is a port on 127.0.0.1 free now, for a webhook that is
// started again on the same address.
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// registerLikeService registers the chart's configuration for the
// webhook on 127.0.0.1:port under serviceLikeHost, with the CA of its
// certificate, for namespaces; a webhook must be serving there.
func registerLikeService(t *testing.T, port int, caPEM []byte, namespaces ...string) {
	t.Helper()
	registerWebhookAt(t, fmt.Sprintf("https://%s:%d/mutate", serviceLikeHost(t), port), caPEM, "", namespaces...)
}

// bodyBounds are the upper bounds of job_signal_webhook_request_body_seconds.
var bodyBounds = []string{"0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2", "+Inf"}

// bodyTimes is the webhook's histogram of the time from a request's
// headers to its body's end: the cumulative count under each bound.
func (w *webhookProcess) bodyTimes(t *testing.T) []float64 {
	t.Helper()
	var counts []float64
	for _, le := range bodyBounds {
		counts = append(counts, w.metric(t, `job_signal_webhook_request_body_seconds_bucket{le="`+le+`"}`))
	}
	return counts
}

// slowestBody is the least bound under which every body counted between
// before and after came, and how many there were.
func slowestBody(before, after []float64) (string, int) {
	total := after[len(after)-1] - before[len(before)-1]
	for i, le := range bodyBounds {
		if after[i]-before[i] == total {
			return le, int(total)
		}
	}
	return "+Inf", int(total)
}

func boundIndex(le string) int { return slices.Index(bodyBounds, le) }

// jobPodLike is webhooktest.AppJobPod with the suite's busybox image
// and programs: a short main and a sidecar that exits on SIGTERM.
func jobPodLike(name string) *corev1.Pod {
	p := webhooktest.AppJobPod(name)
	for i, script := range []string{shortMain, termSidecar} {
		c := &p.Spec.Containers[i]
		c.Image, c.ImagePullPolicy, c.Command = busyboxImage, corev1.PullNever, []string{"sh", "-c", script}
	}
	return p
}
