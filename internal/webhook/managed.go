package webhook

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/job-signal/job-signal/internal/servingcert"
)

// ManagedCertificate is where the webhook keeps the certificate it
// manages itself (--certificate-secret) and who must trust it.
type ManagedCertificate struct {
	Namespace string // the webhook's own
	Secret    string // in Namespace; the chart renders it empty
	// Configurations are the MutatingWebhookConfigurations whose every
	// webhook's caBundle is set to the Secret's bundle.
	Configurations []string
	Want           servingcert.Want
	// Core and Admission are clients for the core and the
	// admissionregistration.k8s.io/v1 APIs, their answers bounded;
	// WatchCore and WatchAdmission the same unbounded, for watches.
	Core, Admission, WatchCore, WatchAdmission rest.Interface
}

// certificateResync is how often the loop reads everything again without
// an event; a change it is told of, or a time a decision names, comes
// sooner.
const certificateResync = 10 * time.Minute

// maxAgain bounds the passes in a row that read again at once (each
// after a write of its own, or a conflict with another writer's).
const maxAgain = 10

// apiTimeout bounds each request of the loop to the API server.
const apiTimeout = 10 * time.Second

// ManageCertificate is the one loop that owns the certificate the webhook
// manages: at once, at every change of the Secret or a configuration (it
// watches them, by name) and when a decision is due, it reads them both,
// asks servingcert.Decide what to do, does it (the Secret written with
// its resourceVersion, so that of several replicas one wins and the
// others read again), serves the Secret's certificate, sets every
// configuration's caBundle to the Secret's bundle, and watches the
// certificate's expiry. It runs until ctx ends; serving is set once
// there is a certificate.
func (c *Config) ManageCertificate(ctx context.Context, m ManagedCertificate, serving *Serving) {
	c.setup()
	nudge := make(chan struct{}, 1)
	poke := func(any) {
		select {
		case nudge <- struct{}{}:
		default:
		}
	}
	handler := cache.ResourceEventHandlerFuncs{AddFunc: poke, UpdateFunc: func(_, o any) { poke(o) }, DeleteFunc: poke}
	watch := func(client rest.Interface, resource, namespace, name string, example runtime.Object) {
		informer := cache.NewSharedIndexInformer(cache.NewFilteredListWatchFromClient(client, resource, namespace,
			func(o *metav1.ListOptions) { o.FieldSelector = "metadata.name=" + name }), example, 0, cache.Indexers{})
		informer.AddEventHandler(handler)
		go informer.Run(ctx.Done())
	}
	watch(m.WatchCore, "secrets", m.Namespace, m.Secret, &corev1.Secret{})
	for _, name := range m.Configurations {
		watch(m.WatchAdmission, "mutatingwebhookconfigurations", "", name, &admissionregistrationv1.MutatingWebhookConfiguration{})
	}
	l := &certLoop{cfg: c, m: m, serving: serving}
	failures, agains := 0, 0
	for {
		wake, again, err := l.pass(ctx)
		if ctx.Err() != nil {
			return
		}
		if agains++; !again || err != nil {
			agains = 0
		} else if agains > maxAgain {
			err = fmt.Errorf("the Secret or a configuration changed under each of %d passes in a row", maxAgain)
		}
		wait := certificateResync
		switch {
		case err != nil:
			failures++
			wait = min(time.Second<<min(failures-1, 6), time.Minute)
			c.Metrics.certificateFailure()
			c.Log.Error("could not manage the serving certificate; trying again", "err", err, "retryIn", wait,
				"secret", m.Namespace+"/"+m.Secret)
		case again:
			failures = 0
			continue
		case !wake.IsZero():
			failures = 0
			wait = min(max(time.Until(wake), 0), certificateResync)
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-nudge:
			timer.Stop()
		case <-timer.C:
		}
	}
}

// certLoop is ManageCertificate's state between passes.
type certLoop struct {
	cfg     *Config
	m       ManagedCertificate
	serving *Serving
	served  []byte // the PEM of the certificate served, to log a change
	// nextSerial is the next certificate last seen trusted by every
	// configuration, since nextSince (by this replica's clock).
	nextSerial string
	nextSince  time.Time
	problems   string // the Secret's unreadable parts, last logged
	missing    string // the configurations last found missing
}

// configRead is one configuration as a pass read it.
type configRead struct {
	name    string
	version string   // resourceVersion
	bundles [][]byte // each webhook's caBundle, in order
}

// pass reads the configurations, then the Secret (in that order: a
// caBundle is patched only with a resourceVersion read before the Secret,
// so a replica that read an older Secret cannot put back an older
// bundle), and does one step. again: it wrote, read again at once; wake:
// when a decision is due.
func (l *certLoop) pass(ctx context.Context) (wake time.Time, again bool, err error) {
	log := l.cfg.Log
	configs, missing, err := l.readConfigs(ctx)
	if err != nil {
		return time.Time{}, false, err
	}
	if m := strings.Join(missing, ","); m != l.missing {
		l.missing = m
		if m != "" {
			log.Warn("a webhook configuration to set the caBundle of does not exist (yet): the next certificate waits for it",
				"configurations", missing)
		}
	}
	secret, err := l.readSecret(ctx)
	if err != nil {
		return time.Time{}, false, err
	}
	state, problems := servingcert.Parse(secret.Data)
	if p := fmt.Sprint(problems); len(problems) > 0 && p != l.problems {
		log.Warn("parts of the certificate's Secret do not read: left out", "secret", secret.Namespace+"/"+secret.Name, "problems", p)
	}
	l.problems = fmt.Sprint(problems)
	var bundles [][]byte
	for _, c := range configs {
		bundles = append(bundles, c.bundles...)
	}
	var trusted = servingcert.Trusted(bundles)
	if len(missing) > 0 || len(bundles) == 0 {
		trusted = nil
	}
	now := time.Now()
	if state.Next != nil && servingcert.Trusts(trusted, state.Bundle, state.Next) {
		if serial := state.Next.Cert.SerialNumber.String(); serial != l.nextSerial {
			l.nextSerial, l.nextSince = serial, now
		}
	} else {
		l.nextSerial, l.nextSince = "", time.Time{}
	}
	d := servingcert.Decide(servingcert.Observed{State: state, Trusted: trusted, NextTrustedSince: l.nextSince}, l.m.Want, now)
	if d.Step != servingcert.Keep {
		return time.Time{}, true, l.write(ctx, secret, state, d, now)
	}
	if err := l.serve(state.Served); err != nil {
		return time.Time{}, false, err
	}
	patched, err := l.setBundles(ctx, configs, servingcert.EncodeBundle(state.Bundle))
	l.cfg.watchExpiry(l.serving, "managed", now)
	return d.Wake, patched, err
}

// errNoCertificate: the loop never served a certificate in time.
var errNoCertificate = errors.New("no serving certificate")

// WaitServing waits, up to timeout, until serving has a certificate.
func WaitServing(ctx context.Context, serving *Serving, timeout time.Duration) error {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-serving.Ready():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return fmt.Errorf("%w within %s", errNoCertificate, timeout)
	}
}
