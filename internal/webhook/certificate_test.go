package webhook_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kong"

	"github.com/job-signal/job-signal/internal/testing/syncbuf"
	"github.com/job-signal/job-signal/internal/testing/testcert"
	"github.com/job-signal/job-signal/internal/testing/webhooktest"
	"github.com/job-signal/job-signal/internal/webhook"
)

// TestServingCertificateExpiry: whatever its source (here files, as
// cert-manager's Secret is mounted), the webhook shows when the
// certificate it serves expires, and one within 30 days of it (the test
// certificate lasts an hour) gets a log line and an Event at once; the
// next one, when the files change, gets its own.
func TestServingCertificateExpiry(t *testing.T) {
	var logs syncbuf.Buffer
	events := make(chan string, 10)
	cfg := &webhook.Config{Log: slog.New(slog.NewTextHandler(&logs, nil)),
		Events: func(_ context.Context, reason, message string) error {
			events <- reason + ": " + message
			return nil
		}}
	s := webhooktest.Start(t, cfg)
	expiry := func() (int64, int64) {
		t.Helper()
		conn, err := tls.Dial("tcp", strings.TrimPrefix(s.URL, "https://"), &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			t.Fatal(err)
		}
		served := conn.ConnectionState().PeerCertificates[0].NotAfter.Unix()
		conn.Close()
		resp, err := s.Client.Get(s.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		text, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		const name = "job_signal_webhook_certificate_expiration_timestamp_seconds "
		_, value, ok := strings.Cut(string(text), "\n"+name)
		if !ok {
			t.Fatalf("/metrics has no %s", name)
		}
		value, _, _ = strings.Cut(value, "\n")
		f, err := strconv.ParseFloat(value, 64)
		if err != nil {
			t.Fatal(err)
		}
		return int64(f), served
	}
	if shown, served := expiry(); shown != served {
		t.Errorf("the metric shows %d, the certificate served expires at %d", shown, served)
	}
	wantEvent := func(cn string) {
		t.Helper()
		select {
		case e := <-events:
			if !strings.HasPrefix(e, webhook.ReasonCertificateExpiring+": ") || !strings.Contains(e, cn) || !strings.Contains(e, "cert-manager") {
				t.Errorf("Event %q: want the reason, the certificate and what renews it", e)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no Event about certificate %s", cn)
		}
	}
	wantEvent("first")
	if n := strings.Count(logs.String(), "the serving certificate expires within 30 days"); n != 1 {
		t.Errorf("%d warnings logged, want 1:\n%s", n, logs.String())
	}
	old := time.Now().Add(-time.Minute) // modification times may be coarse
	os.Chtimes(s.CertFile, old, old)
	if _, err := testcert.Write(s.CertFile, s.KeyFile, "second"); err != nil {
		t.Fatal(err)
	}
	wantEvent("second")
	shown, served := expiry()
	for deadline := time.Now().Add(10 * time.Second); shown != served; shown, served = expiry() {
		if time.Now().After(deadline) {
			t.Fatalf("the metric shows %d, the certificate served expires at %d", shown, served)
		}
	}
	select {
	case e := <-events:
		t.Errorf("one more Event: %s", e)
	default:
	}
}

// TestCertificateFlags: one source of the serving certificate, complete;
// each mistake named by its flag.
func TestCertificateFlags(t *testing.T) {
	managed := []string{"--certificate-secret=jsw-certificate", "--webhook-configuration=jsw", "--certificate-hosts=jsw.ns.svc,127.0.0.1"}
	for _, tc := range []struct {
		args []string
		want string // "": valid
	}{
		{[]string{"--tls-cert-file=a", "--tls-key-file=b"}, ""},
		{managed, ""},
		{append(managed, "--webhook-configuration=other", "--certificate-validity=2m"), ""},
		{nil, "--tls-cert-file and --tls-key-file, or --certificate-secret"},
		{[]string{"--tls-cert-file=a"}, "--tls-cert-file and --tls-key-file"},
		{append(managed, "--tls-cert-file=a"), "give one source"},
		{[]string{"--tls-cert-file=a", "--tls-key-file=b", "--webhook-configuration=jsw"}, "go with --certificate-secret only"},
		{managed[:2], "--certificate-hosts"},
		{[]string{managed[0], managed[2]}, "--webhook-configuration"},
		{append(managed, "--certificate-validity=30s"), "--certificate-validity: at least 1m0s"},
		{[]string{"--certificate-secret=Bad_Name", managed[1], managed[2]}, "--certificate-secret \"Bad_Name\""},
		{[]string{managed[0], managed[1], "--certificate-hosts=jsw.ns.svc,not a host"}, "\"not a host\" is neither"},
	} {
		var cmd webhook.Cmd
		parser, err := kong.New(&cmd, kong.Vars{"image": "x"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = parser.Parse(tc.args)
		if got := fmt.Sprint(err); (tc.want == "") != (err == nil) || !strings.Contains(got, tc.want) {
			t.Errorf("%q: %v, want %q", tc.args, err, tc.want)
		}
	}
}
