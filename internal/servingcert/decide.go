package servingcert

import (
	"bytes"
	"crypto/x509"
	"fmt"
	"net"
	"slices"
	"time"
)

// Want is what the served certificate must be: for these hosts, and, when
// issued, valid this long.
type Want struct {
	Hosts    []string
	Validity time.Duration
}

// Observed is what one pass of the loop has read: the Secret, the CAs
// every webhook of the configurations trusts now, and since when (by the
// loop's own clock) the configurations have trusted the next
// certificate's CA (zero: they do not yet, or it was not seen).
type Observed struct {
	State            State
	Trusted          []*x509.Certificate
	NextTrustedSince time.Time
}

// Step is what the loop does next to the Secret.
type Step int

const (
	// Keep: nothing to change in the Secret (the loop still sets the
	// configurations' caBundle to its bundle).
	Keep Step = iota
	// IssueNow: no certificate that can be served (none yet, expired,
	// unreadable, not signed by a CA of the bundle): issue one and serve it
	// at once, since nothing better is served meanwhile.
	IssueNow
	// Stage: the served certificate has a third of its life left, or is
	// not for every host: issue the next one and add its CA to the bundle,
	// to be served once the configurations trust it.
	Stage
	// Switch: the configurations have trusted the next certificate's CA
	// for Settle: serve it.
	Switch
	// Prune: the bundle holds a CA it no longer needs (Bundle).
	Prune
)

func (s Step) String() string {
	return [...]string{"keep", "issue", "stage", "switch", "prune"}[s]
}

// Decision is Decide's answer: the step, why, and when to decide again
// at the latest (for a time-driven step; zero: no such time).
type Decision struct {
	Step Step
	Why  string
	Wake time.Time
}

// RenewAt is when a certificate is renewed: when a third of its life is
// left (cert-manager's default, renewBefore one third of the duration),
// months before it expires, long before the warning at 30 days.
func RenewAt(c *x509.Certificate) time.Time {
	return c.NotBefore.Add(c.NotAfter.Sub(c.NotBefore) * 2 / 3)
}

// Settle is how long the configurations must have trusted a new CA
// before its certificate is served: the API server learns of a changed
// configuration through a watch, each API server of a cluster on its
// own. A minute, or a twentieth of a short-lived certificate's life.
func Settle(c *x509.Certificate) time.Duration {
	return min(time.Minute, c.NotAfter.Sub(c.NotBefore)/20)
}

// maxRetired is how many CAs Bundle keeps that sign neither the served nor
// the next certificate: the one before, which a replica that has not seen
// the switch yet may still serve.
const maxRetired = 1

// Bundle is which CAs the bundle holds, given the Secret: those that sign
// the served or the next certificate and, of the others, the newest
// (the previously served certificate's, which replicas may serve until
// they see the switch), none of them expired; oldest first.
func Bundle(s State, now time.Time) []*x509.Certificate {
	var out []*x509.Certificate
	retired := 0
	newestFirst := slices.Clone(s.Bundle)
	slices.SortStableFunc(newestFirst, func(a, b *x509.Certificate) int { return b.NotBefore.Compare(a.NotBefore) })
	for _, ca := range newestFirst {
		if now.After(ca.NotAfter) || slices.ContainsFunc(out, ca.Equal) {
			continue
		}
		if signs(ca, s.Served) || signs(ca, s.Next) {
			out = append(out, ca)
		} else if retired < maxRetired {
			retired++
			out = append(out, ca)
		}
	}
	slices.Reverse(out)
	return out
}

// signs says whether ca signed p's certificate.
func signs(ca *x509.Certificate, p *Pair) bool {
	return p != nil && bytes.Equal(p.Cert.RawIssuer, ca.RawSubject) && p.Cert.CheckSignatureFrom(ca) == nil
}

// issuer is the CA of cas that signed p, nil if none.
func issuer(cas []*x509.Certificate, p *Pair) *x509.Certificate {
	for _, ca := range cas {
		if signs(ca, p) {
			return ca
		}
	}
	return nil
}

// check says why p cannot be served at now with the bundle, or "". A
// certificate not valid yet by this clock is no reason: another replica
// with a clock ahead of ours issued it, and issuing another would fight
// it (the backdate covers the API server's clock).
func check(p *Pair, bundle []*x509.Certificate, now time.Time) string {
	switch ca := issuer(bundle, p); {
	case p == nil:
		return "none"
	case !now.Before(p.Cert.NotAfter):
		return fmt.Sprintf("expired at %s", p.Cert.NotAfter.UTC().Format(time.RFC3339))
	case ca == nil:
		return "signed by no CA of the bundle"
	case !now.Before(ca.NotAfter):
		return "its CA has expired"
	}
	return ""
}

// missingHosts are the hosts c is not for.
func missingHosts(c *x509.Certificate, hosts []string) []string {
	var out []string
	for _, h := range hosts {
		if c.VerifyHostname(h) != nil {
			out = append(out, h)
		}
	}
	return out
}

// Trusts says whether the configurations, which trust the CAs trusted,
// trust the CA of bundle that signed p.
func Trusts(trusted, bundle []*x509.Certificate, p *Pair) bool {
	ca := issuer(bundle, p)
	return ca != nil && slices.ContainsFunc(trusted, ca.Equal)
}

// Decide is what to do next, from what a pass has read. In order: a
// certificate must be served (IssueNow, or Switch to a trusted next one
// when the served one is unusable); the next one must be usable and for
// every host (Stage again); the served one is renewed when a third of its
// life is left or it misses a host (Stage); the next one is served once
// the configurations have trusted its CA for Settle (Switch); the bundle
// drops the CAs it no longer needs (Prune).
func Decide(o Observed, want Want, now time.Time) Decision {
	s := o.State
	served, next := check(s.Served, s.Bundle, now), check(s.Next, s.Bundle, now)
	nextTrusted := next == "" && Trusts(o.Trusted, s.Bundle, s.Next)
	var nextMissing []string
	if s.Next != nil {
		nextMissing = missingHosts(s.Next.Cert, want.Hosts)
	}
	d := Decision{Wake: wake(o, now)}
	switch {
	case served != "" && nextTrusted && len(nextMissing) == 0:
		d.Step, d.Why = Switch, "the served certificate: "+served+"; the next one is trusted already"
	case served != "":
		d.Step, d.Why = IssueNow, "the served certificate: "+served
	case s.Next != nil && next != "":
		d.Step, d.Why = Stage, "the next certificate: "+next
	case s.Next != nil && len(nextMissing) > 0:
		d.Step, d.Why = Stage, fmt.Sprintf("the next certificate is not for %v", nextMissing)
	case s.Next == nil && !now.Before(RenewAt(s.Served.Cert)):
		d.Step, d.Why = Stage, fmt.Sprintf("a third of the served certificate's life is left (it expires at %s)",
			s.Served.Cert.NotAfter.UTC().Format(time.RFC3339))
	case s.Next == nil && len(missingHosts(s.Served.Cert, want.Hosts)) > 0:
		d.Step, d.Why = Stage, fmt.Sprintf("the served certificate is not for %v", missingHosts(s.Served.Cert, want.Hosts))
	case nextTrusted && !o.NextTrustedSince.IsZero() && !now.Before(o.NextTrustedSince.Add(Settle(s.Next.Cert))):
		d.Step, d.Why = Switch, fmt.Sprintf("the configurations have trusted its CA since %s", o.NextTrustedSince.UTC().Format(time.RFC3339))
	case !sameCerts(Bundle(s, now), s.Bundle):
		d.Step, d.Why = Prune, "the bundle holds a CA it no longer needs"
	}
	return d
}

// wake is the earliest time something may be due without anything read
// changing: a renewal, a switch, a CA or certificate expiring.
func wake(o Observed, now time.Time) time.Time {
	var at []time.Time
	s := o.State
	if s.Served != nil {
		at = append(at, s.Served.Cert.NotAfter)
		if s.Next == nil {
			at = append(at, RenewAt(s.Served.Cert))
		}
	}
	if s.Next != nil {
		at = append(at, s.Next.Cert.NotAfter)
		if !o.NextTrustedSince.IsZero() {
			at = append(at, o.NextTrustedSince.Add(Settle(s.Next.Cert)))
		}
	}
	for _, ca := range s.Bundle {
		at = append(at, ca.NotAfter.Add(time.Second)) // expired once past NotAfter
	}
	var first time.Time
	for _, t := range at {
		if t.After(now) && (first.IsZero() || t.Before(first)) {
			first = t
		}
	}
	return first
}

// Apply is the State after step, with issued the certificate a step that
// issues made (IssueNow, Stage; nil for the others).
func Apply(s State, step Step, issued *Issued, now time.Time) State {
	switch step {
	case IssueNow:
		s.Served, s.Next = issued.Pair, nil
	case Stage:
		s.Next = issued.Pair
	case Switch:
		s.Served, s.Next = s.Next, nil
	}
	if step.Issues() {
		s.Bundle = append(slices.Clone(s.Bundle), issued.CA)
	}
	s.Bundle = Bundle(s, now)
	return s
}

// Issues says whether step needs a new certificate.
func (s Step) Issues() bool { return s == IssueNow || s == Stage }

// Trusted is the CAs every caBundle given trusts: the intersection (nil
// when one is empty or does not read).
func Trusted(caBundles [][]byte) []*x509.Certificate {
	var out []*x509.Certificate
	for i, b := range caBundles {
		cas, err := ParseBundle(b)
		if err != nil {
			return nil
		}
		if i == 0 {
			out = cas
			continue
		}
		out = slices.DeleteFunc(out, func(c *x509.Certificate) bool { return !slices.ContainsFunc(cas, c.Equal) })
	}
	return out
}

// CheckBundle reads bundle back as the API server will (ParseBundle),
// and checks that it verifies p's certificate for every host: a bundle
// the webhook is about to write must trust what it serves.
func CheckBundle(bundle []byte, p *Pair, hosts []string, now time.Time) error {
	cas, err := ParseBundle(bundle)
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	for _, c := range cas {
		roots.AddCert(c)
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			h = ip.String()
		}
		if _, err := p.Cert.Verify(x509.VerifyOptions{DNSName: h, Roots: roots, CurrentTime: now,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			return fmt.Errorf("the bundle does not verify the certificate for %s: %w", h, err)
		}
	}
	return nil
}

func sameCerts(a, b []*x509.Certificate) bool {
	return slices.EqualFunc(a, b, (*x509.Certificate).Equal)
}
