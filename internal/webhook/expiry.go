package webhook

import (
	"context"
	"fmt"
	"time"
)

// warnBefore is how long before its expiry the served certificate is
// warned about, whatever its source: a log line and an Event, once a day.
// A certificate the webhook manages is renewed when a third of its life
// is left (months before, with the chart's year), so a warning means
// renewal has been failing for a long while; cert-manager renews 30 days
// before by the chart's default, renewBefore.
const (
	warnBefore = 30 * 24 * time.Hour
	warnEvery  = 24 * time.Hour
)

// warnDue says whether to warn now about the served certificate that
// expires at notAfter: when it is within warnBefore of it, the first time
// for this certificate (same: it is the one last warned about) and then
// every warnEvery.
func warnDue(notAfter, now time.Time, same bool, lastWarned time.Time) bool {
	if notAfter.Sub(now) > warnBefore {
		return false
	}
	return !same || now.Sub(lastWarned) >= warnEvery
}

// sourceAdvice says, for a certificate's source, what to look at when it
// is near its expiry.
var sourceAdvice = map[string]string{
	"files":   "it is renewed outside the webhook (cert-manager: kubectl describe certificate; your own Secret: replace it), and reloaded within seconds of the kubelet updating the files",
	"managed": "the webhook renews it when a third of its life is left, and has failed to so far: see its log",
}

// watchExpiry shows the served certificate's expiry (a metric) and warns
// when it is due (warnDue): a log line and, with API access, an Event
// about the webhook's Pod. Only the loop that owns s calls it.
func (c *Config) watchExpiry(s *Serving, source string, now time.Time) {
	c.setup()
	cert := s.cert.Load()
	if cert == nil || cert.Leaf == nil {
		return
	}
	leaf := cert.Leaf
	c.Metrics.expiry.Set(float64(leaf.NotAfter.Unix()))
	serial := leaf.SerialNumber.Text(16)
	if !warnDue(leaf.NotAfter, now, s.warnedSerial == serial, s.warnedAt) {
		return
	}
	s.warnedSerial, s.warnedAt = serial, now
	left := leaf.NotAfter.Sub(now).Round(time.Second)
	message := fmt.Sprintf("The serving certificate (%s, serial %.16s) expires at %s, in %s: %s.",
		leaf.Subject.CommonName, serial, leaf.NotAfter.UTC().Format(time.RFC3339), left, sourceAdvice[source])
	c.Log.Warn("the serving certificate expires within 30 days", "notAfter", leaf.NotAfter.UTC(), "left", left,
		"source", source, "serial", serial, "subject", leaf.Subject.CommonName)
	if c.Events == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), eventTimeout)
	defer cancel()
	if err := c.Events(ctx, ReasonCertificateExpiring, message); err != nil {
		c.Log.Warn("could not record the Event about the serving certificate's expiry", "err", err)
	}
}

// ReasonCertificateExpiring is the reason of the Event warnDue makes.
const ReasonCertificateExpiring = "CertificateExpiring"

// eventTimeout bounds the creation of one Event.
const eventTimeout = 10 * time.Second
