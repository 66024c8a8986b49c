package servingcert

import (
	"crypto/x509"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

const validity = 90 * 24 * time.Hour

var hosts = []string{"job-signal-webhook.job-signal-system.svc", "127.0.0.1"}

func issue(t *testing.T, at time.Time, h ...string) *Issued {
	t.Helper()
	if len(h) == 0 {
		h = hosts
	}
	i, err := Issue(h, validity, at)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

// TestIssue: the CA signs the certificate, for every host, both valid
// from a little before now for the validity asked; the key matches.
func TestIssue(t *testing.T) {
	i := issue(t, t0)
	if err := CheckBundle(EncodeBundle([]*x509.Certificate{i.CA}), i.Pair, hosts, t0); err != nil {
		t.Fatal(err)
	}
	if err := CheckBundle(EncodeBundle([]*x509.Certificate{i.CA}), i.Pair, []string{"other.svc"}, t0); err == nil {
		t.Error("the certificate verifies for a host it was not issued for")
	}
	if got := i.Pair.Cert.NotAfter; !got.Equal(t0.Add(validity)) {
		t.Errorf("NotAfter %s, want %s", got, t0.Add(validity))
	}
	if got := i.Pair.Cert.NotBefore; !got.Equal(t0.Add(-time.Hour)) {
		t.Errorf("NotBefore %s, want an hour before", got)
	}
	if !i.CA.IsCA || i.Pair.Cert.IsCA || !i.CA.NotAfter.Equal(i.Pair.Cert.NotAfter) {
		t.Error("want a CA and a leaf that expire together")
	}
	if _, err := i.Pair.TLS(); err != nil {
		t.Error(err)
	}
	short, err := Issue(hosts, 2*time.Minute, t0)
	if err != nil {
		t.Fatal(err)
	}
	if got := t0.Sub(short.Pair.Cert.NotBefore); got != 12*time.Second {
		t.Errorf("a 2-minute certificate is backdated %s, want a tenth of it", got)
	}
	for _, bad := range []struct {
		hosts    []string
		validity time.Duration
	}{{nil, validity}, {hosts, 30 * time.Second}} {
		if _, err := Issue(bad.hosts, bad.validity, t0); err == nil {
			t.Errorf("Issue(%v, %s) succeeded", bad.hosts, bad.validity)
		}
	}
}

// TestParseData: what Data writes Parse reads back; an empty Secret is an
// empty State; a part that does not read is left out with its reason.
func TestParseData(t *testing.T) {
	a, b := issue(t, t0), issue(t, t0.Add(time.Hour))
	s := State{Bundle: []*x509.Certificate{a.CA, b.CA}, Served: a.Pair, Next: b.Pair}
	got, problems := Parse(s.Data())
	if len(problems) != 0 || !sameCerts(got.Bundle, s.Bundle) || !got.Served.Cert.Equal(a.Pair.Cert) || !got.Next.Cert.Equal(b.Pair.Cert) {
		t.Errorf("round trip: %+v, %v", got, problems)
	}
	if got, problems := Parse(nil); got.Served != nil || got.Next != nil || got.Bundle != nil || problems != nil {
		t.Errorf("an empty Secret: %+v, %v", got, problems)
	}
	data := s.Data()
	data[KeyKey] = b.Pair.KeyPEM // another certificate's key
	data[KeyBundle] = []byte("not PEM")
	got, problems = Parse(data)
	if got.Served != nil || got.Next == nil || got.Bundle != nil || len(problems) != 2 ||
		!strings.Contains(problems[0].Error(), KeyBundle) || !strings.Contains(problems[1].Error(), KeyCert) {
		t.Errorf("a mismatched key and a bad bundle: %+v, %v", got, problems)
	}
}

// TestBundle: the CAs of the served and the next certificates, and of the
// others only the newest (the one served before), none expired, oldest
// first, each once.
func TestBundle(t *testing.T) {
	c0, c1, c2, c3 := issue(t, t0), issue(t, t0.Add(40*24*time.Hour)), issue(t, t0.Add(80*24*time.Hour)), issue(t, t0.Add(85*24*time.Hour))
	cas := func(is ...*Issued) []*x509.Certificate {
		var out []*x509.Certificate
		for _, i := range is {
			out = append(out, i.CA)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		s    State
		now  time.Time
		want []*x509.Certificate
	}{
		{"served only", State{Bundle: cas(c1), Served: c1.Pair}, t0.Add(41 * 24 * time.Hour), cas(c1)},
		{"served and next", State{Bundle: cas(c1, c2), Served: c1.Pair, Next: c2.Pair}, t0.Add(81 * 24 * time.Hour), cas(c1, c2)},
		{"the one before is kept", State{Bundle: cas(c0, c1, c2), Served: c2.Pair}, t0.Add(81 * 24 * time.Hour), cas(c1, c2)},
		{"only the newest of the retired", State{Bundle: cas(c2, c1, c0, c3), Served: c3.Pair}, t0.Add(86 * 24 * time.Hour), cas(c2, c3)},
		{"expired ones go", State{Bundle: cas(c0, c1), Served: c1.Pair}, t0.Add(validity + time.Second), cas(c1)},
		{"even the served one's", State{Bundle: cas(c0), Served: c0.Pair}, t0.Add(validity + time.Second), nil},
		{"each once", State{Bundle: cas(c1, c1, c2), Served: c2.Pair}, t0.Add(81 * 24 * time.Hour), cas(c1, c2)},
	} {
		if got := Bundle(tc.s, tc.now); !sameCerts(got, tc.want) {
			t.Errorf("%s: %d CAs, want %d", tc.name, len(got), len(tc.want))
		}
	}
}

// TestDecide: what the loop does next, for each state a Secret and the
// configurations can be in.
func TestDecide(t *testing.T) {
	served, next, other := issue(t, t0), issue(t, t0.Add(60*24*time.Hour)), issue(t, t0)
	old := issue(t, t0.Add(-60*24*time.Hour))
	renew := RenewAt(served.Pair.Cert)
	settle := Settle(next.Pair.Cert)
	later := t0.Add(61 * 24 * time.Hour) // past renew, next issued
	bundle := func(is ...*Issued) []*x509.Certificate {
		var out []*x509.Certificate
		for _, i := range is {
			out = append(out, i.CA)
		}
		return out
	}
	staged := State{Bundle: bundle(served, next), Served: served.Pair, Next: next.Pair}
	for _, tc := range []struct {
		name     string
		o        Observed
		want     Want
		now      time.Time
		step     Step
		why      string    // in Why
		wake     time.Time // zero: not checked
		wantWake bool
	}{
		{name: "empty Secret", o: Observed{}, now: t0, step: IssueNow, why: "none"},
		{name: "fresh and trusted", o: Observed{State: State{Bundle: bundle(served), Served: served.Pair}, Trusted: bundle(served)},
			now: t0.Add(time.Hour), step: Keep, wake: renew},
		{name: "fresh, not trusted yet: the loop patches, the Secret stays",
			o: Observed{State: State{Bundle: bundle(served), Served: served.Pair}}, now: t0.Add(time.Hour), step: Keep, wake: renew},
		{name: "a third of its life left", o: Observed{State: State{Bundle: bundle(served), Served: served.Pair}, Trusted: bundle(served)},
			now: renew, step: Stage, why: "a third"},
		{name: "a host it is not for", o: Observed{State: State{Bundle: bundle(served), Served: served.Pair}},
			want: Want{Hosts: []string{"job-signal-webhook.job-signal-system.svc", "new.job-signal-system.svc"}},
			now:  t0.Add(time.Hour), step: Stage, why: "new.job-signal-system.svc"},
		{name: "expired, nothing next", o: Observed{State: State{Bundle: bundle(served), Served: served.Pair}},
			now: served.Pair.Cert.NotAfter, step: IssueNow, why: "expired"},
		{name: "signed by a CA not in the bundle", o: Observed{State: State{Bundle: bundle(other), Served: served.Pair}},
			now: t0.Add(time.Hour), step: IssueNow, why: "no CA of the bundle"},
		{name: "no bundle at all", o: Observed{State: State{Served: served.Pair}}, now: t0.Add(time.Hour), step: IssueNow},
		{name: "staged, not trusted yet", o: Observed{State: staged, Trusted: bundle(served)}, now: later, step: Keep},
		{name: "trusted by one configuration only", o: Observed{State: staged,
			Trusted: Trusted([][]byte{EncodeBundle(bundle(served, next)), EncodeBundle(bundle(served))})}, now: later, step: Keep},
		{name: "trusted, settling", o: Observed{State: staged, Trusted: bundle(served, next), NextTrustedSince: later},
			now: later.Add(settle - time.Second), step: Keep, wake: later.Add(settle)},
		{name: "trusted for the settling time", o: Observed{State: staged, Trusted: bundle(served, next), NextTrustedSince: later},
			now: later.Add(settle), step: Switch, why: "since"},
		{name: "trusted, but not seen so yet", o: Observed{State: staged, Trusted: bundle(served, next)}, now: later, step: Keep},
		{name: "the served one expired, the next trusted: at once",
			o:   Observed{State: staged, Trusted: bundle(served, next), NextTrustedSince: served.Pair.Cert.NotAfter},
			now: served.Pair.Cert.NotAfter, step: Switch, why: "trusted already"},
		{name: "the served one expired, the next not trusted", o: Observed{State: staged, Trusted: bundle(served)},
			now: served.Pair.Cert.NotAfter, step: IssueNow},
		{name: "the next one expired", o: Observed{State: State{Bundle: bundle(served, old), Served: served.Pair, Next: old.Pair}},
			now: old.Pair.Cert.NotAfter, step: Stage, why: "the next certificate: expired"},
		{name: "the next one signed by no CA of the bundle", o: Observed{State: State{Bundle: bundle(served), Served: served.Pair, Next: next.Pair}},
			now: later, step: Stage, why: "the next certificate"},
		{name: "the next one misses a host", o: Observed{State: staged, Trusted: bundle(served, next), NextTrustedSince: later},
			want: Want{Hosts: []string{"new.job-signal-system.svc"}}, now: later.Add(settle), step: Stage, why: "not for"},
		{name: "an expired CA in the bundle", o: Observed{State: State{Bundle: bundle(other, next), Served: next.Pair}},
			now: other.CA.NotAfter.Add(time.Second), step: Prune},
		{name: "two retired CAs", o: Observed{State: State{Bundle: bundle(other, served, next), Served: next.Pair}},
			now: later, step: Prune},
		{name: "one retired CA is kept", o: Observed{State: State{Bundle: bundle(served, next), Served: next.Pair}},
			now: later, step: Keep, wake: served.CA.NotAfter.Add(time.Second)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if want.Hosts == nil {
				want.Hosts = hosts
			}
			d := Decide(tc.o, want, tc.now)
			if d.Step != tc.step || !strings.Contains(d.Why, tc.why) {
				t.Errorf("%s (%q), want %s (%q)", d.Step, d.Why, tc.step, tc.why)
			}
			if !tc.wake.IsZero() && !d.Wake.Equal(tc.wake) {
				t.Errorf("wake at %s, want %s", d.Wake, tc.wake)
			}
			if d.Step != Keep && d.Why == "" {
				t.Error("no reason given")
			}
		})
	}
}

// TestApply: each step's State; the bundle always holds the served and
// the next certificates' CAs.
func TestApply(t *testing.T) {
	a, b := issue(t, t0), issue(t, t0.Add(60*24*time.Hour))
	s := Apply(State{}, IssueNow, a, t0)
	if s.Served != a.Pair || s.Next != nil || !sameCerts(s.Bundle, []*x509.Certificate{a.CA}) {
		t.Fatalf("issued: %+v", s)
	}
	now := t0.Add(60 * 24 * time.Hour)
	s = Apply(s, Stage, b, now)
	if s.Served != a.Pair || s.Next != b.Pair || !sameCerts(s.Bundle, []*x509.Certificate{a.CA, b.CA}) {
		t.Fatalf("staged: %+v", s)
	}
	s = Apply(s, Switch, nil, now)
	if s.Served != b.Pair || s.Next != nil || !sameCerts(s.Bundle, []*x509.Certificate{a.CA, b.CA}) {
		t.Fatalf("switched: the old CA must stay for replicas that serve it still: %+v", s)
	}
	s = Apply(s, Prune, nil, a.CA.NotAfter.Add(time.Second))
	if !sameCerts(s.Bundle, []*x509.Certificate{b.CA}) {
		t.Fatalf("pruned: %d CAs", len(s.Bundle))
	}
}

// TestRotationNeverUntrusted walks a webhook's life through three
// renewals, a second at a time: two replicas run the decisions on the
// Secret (one seeing it a few seconds late), the configuration is patched
// with the Secret's bundle, and the API server sees the configuration
// late too, by less than Settle. At every second, the certificate each
// replica serves verifies against the bundle the API server uses: no
// call is refused.
func TestRotationNeverUntrusted(t *testing.T) {
	const (
		life      = 90 * time.Second
		secretLag = 4 // seconds a replica sees the Secret late
		apiLag    = 2 // seconds the API server sees the configuration late
	)
	want := Want{Hosts: hosts, Validity: life}
	start := t0
	var secrets []State  // the Secret, second by second
	var configs [][]byte // the configuration's caBundle, second by second
	var since time.Time  // the deciding replica's NextTrustedSince
	var switches, stages int
	secret, config := State{}, []byte(nil)
	for sec := 0; sec < 4*int(life/time.Second); sec++ {
		now := start.Add(time.Duration(sec) * time.Second)
		// One pass of the loop, as the first replica runs it: decide and
		// write until nothing is left to do, then patch the configuration.
		for range 4 {
			trusted := Trusted([][]byte{config})
			if secret.Next != nil && Trusts(trusted, secret.Bundle, secret.Next) {
				if since.IsZero() {
					since = now
				}
			} else {
				since = time.Time{}
			}
			d := Decide(Observed{State: secret, Trusted: trusted, NextTrustedSince: since}, want, now)
			if d.Step == Keep {
				break
			}
			var issued *Issued
			if d.Step.Issues() {
				var err error
				if issued, err = Issue(want.Hosts, want.Validity, now); err != nil {
					t.Fatal(err)
				}
			}
			switches += map[bool]int{true: 1}[d.Step == Switch]
			stages += map[bool]int{true: 1}[d.Step == Stage]
			secret = Apply(secret, d.Step, issued, now)
		}
		config = EncodeBundle(secret.Bundle)
		secrets, configs = append(secrets, secret), append(configs, config)
		if sec < 1 {
			continue // the first certificate, before the configuration trusted anything
		}
		seen := configs[max(0, sec-apiLag)]
		for _, lag := range []int{0, secretLag} {
			served := secrets[max(0, sec-lag)].Served
			if err := CheckBundle(seen, served, hosts, now); err != nil && sec > apiLag {
				t.Fatalf("at %s, a replica %ds behind serves a certificate the API server does not trust: %v", now.Sub(start), lag, err)
			}
		}
		if n := len(secret.Bundle); n > 3 {
			t.Fatalf("at %s the bundle holds %d CAs", now.Sub(start), n)
		}
	}
	if stages < 3 || switches != stages {
		t.Errorf("%d renewals staged, %d switched; want at least 3, each switched", stages, switches)
	}
	if !slices.ContainsFunc(secrets, func(s State) bool { return len(s.Bundle) == 2 }) {
		t.Error("the old and the new CA were never in the bundle together")
	}
}
