package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/job-signal/job-signal/internal/servingcert"
)

// What ManageCertificate's loop does through the API server: read the
// configurations and the Secret, write the Secret, set the caBundles.

// readConfigs reads each configuration; missing are those not found.
func (l *certLoop) readConfigs(ctx context.Context) (found []configRead, missing []string, err error) {
	for _, name := range l.m.Configurations {
		ctx, cancel := context.WithTimeout(ctx, apiTimeout)
		var cfg admissionregistrationv1.MutatingWebhookConfiguration
		err := l.m.Admission.Get().Resource("mutatingwebhookconfigurations").Name(name).Do(ctx).Into(&cfg)
		cancel()
		switch {
		case apierrors.IsNotFound(err):
			missing = append(missing, name)
			continue
		case apierrors.IsForbidden(err):
			return nil, nil, fmt.Errorf("read MutatingWebhookConfiguration %s: %w (the webhook needs get, list, watch and patch on it, by name: the chart's ClusterRole gives them)", name, err)
		case err != nil:
			return nil, nil, fmt.Errorf("read MutatingWebhookConfiguration %s: %w", name, err)
		}
		r := configRead{name: name, version: cfg.ResourceVersion}
		for _, w := range cfg.Webhooks {
			r.bundles = append(r.bundles, w.ClientConfig.CABundle)
		}
		found = append(found, r)
	}
	return found, missing, nil
}

func (l *certLoop) readSecret(ctx context.Context) (*corev1.Secret, error) {
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	secret := &corev1.Secret{}
	err := l.m.Core.Get().Namespace(l.m.Namespace).Resource("secrets").Name(l.m.Secret).Do(ctx).Into(secret)
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("Secret %s/%s does not exist: the chart renders it, empty; without the chart: kubectl -n %[1]s create secret generic %[2]s", l.m.Namespace, l.m.Secret)
	case apierrors.IsForbidden(err):
		return nil, fmt.Errorf("read Secret %s/%s: %w (the webhook needs get, list, watch and update on it, by name: the chart's Role gives them)", l.m.Namespace, l.m.Secret, err)
	case err != nil:
		return nil, fmt.Errorf("read Secret %s/%s: %w", l.m.Namespace, l.m.Secret, err)
	}
	return secret, nil
}

// write does step d to the Secret: the new State, read back as it will be
// read (its bundle must verify what it serves and what comes next),
// written with the resourceVersion it was read at. A conflict is no
// error: another replica wrote first, and the next pass reads what it did.
func (l *certLoop) write(ctx context.Context, secret *corev1.Secret, state servingcert.State, d servingcert.Decision, now time.Time) error {
	var issued *servingcert.Issued
	if d.Step.Issues() {
		var err error
		if issued, err = servingcert.Issue(l.m.Want.Hosts, l.m.Want.Validity, now); err != nil {
			return err
		}
	}
	next := servingcert.Apply(state, d.Step, issued, now)
	bundle := servingcert.EncodeBundle(next.Bundle)
	for _, p := range []*servingcert.Pair{next.Served, next.Next} {
		if p == nil {
			continue
		}
		if err := servingcert.CheckBundle(bundle, p, l.m.Want.Hosts, now); err != nil {
			return fmt.Errorf("%s: the new Secret would not trust what it holds: %w", d.Step, err)
		}
	}
	if got, problems := servingcert.Parse(next.Data()); len(problems) > 0 || got.Served == nil {
		return fmt.Errorf("%s: the new Secret does not read back: %v", d.Step, problems)
	}
	secret = secret.DeepCopy()
	secret.Data = next.Data()
	ctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	err := l.m.Core.Put().Namespace(secret.Namespace).Resource("secrets").Name(secret.Name).Body(secret).Do(ctx).Error()
	if apierrors.IsConflict(err) {
		l.cfg.Log.Debug("another replica changed the certificate's Secret first: reading it again", "wanted", d.Step.String())
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: write Secret %s/%s: %w", d.Step, secret.Namespace, secret.Name, err)
	}
	l.cfg.Metrics.certificateStep(d.Step.String())
	attrs := []any{"step", d.Step.String(), "why", d.Why, "secret", secret.Namespace + "/" + secret.Name, "cas", len(next.Bundle)}
	if issued != nil {
		attrs = append(attrs, "serial", issued.Pair.Cert.SerialNumber.Text(16), "notAfter", issued.Pair.Cert.NotAfter.UTC())
	}
	l.cfg.Log.Info(stepMessages[d.Step], attrs...)
	return nil
}

var stepMessages = map[servingcert.Step]string{
	servingcert.IssueNow: "issued a serving certificate and its CA",
	servingcert.Stage:    "issued the next serving certificate; its CA joins the bundle",
	servingcert.Switch:   "the next serving certificate replaces the served one",
	servingcert.Prune:    "a CA no longer needed leaves the bundle",
}

// serve makes p the certificate this replica serves.
func (l *certLoop) serve(p *servingcert.Pair) error {
	if bytes.Equal(p.CertPEM, l.served) {
		return nil
	}
	cert, err := p.TLS()
	if err != nil {
		return err
	}
	l.serving.set(cert)
	l.served = p.CertPEM
	l.cfg.Log.Info("serving certificate", "serial", p.Cert.SerialNumber.Text(16), "notAfter", p.Cert.NotAfter.UTC(),
		"renewAt", servingcert.RenewAt(p.Cert).UTC())
	return nil
}

// setBundles sets the caBundle of each configuration's webhooks that does
// not hold bundle, by a JSON patch that names the resourceVersion read
// (a precondition: a configuration changed since is read again).
func (l *certLoop) setBundles(ctx context.Context, configs []configRead, bundle []byte) (patched bool, err error) {
	for _, c := range configs {
		ops := []map[string]any{{"op": "replace", "path": "/metadata/resourceVersion", "value": c.version}}
		for i, b := range c.bundles {
			if !bytes.Equal(b, bundle) {
				ops = append(ops, map[string]any{"op": "add", "path": fmt.Sprintf("/webhooks/%d/clientConfig/caBundle", i), "value": bundle})
			}
		}
		if len(ops) == 1 {
			continue
		}
		body, err := json.Marshal(ops) // []byte as base64, as the API server reads caBundle
		if err != nil {
			return patched, err
		}
		ctx, cancel := context.WithTimeout(ctx, apiTimeout)
		err = l.m.Admission.Patch(types.JSONPatchType).Resource("mutatingwebhookconfigurations").Name(c.name).Body(body).Do(ctx).Error()
		cancel()
		switch {
		case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
			return true, nil // changed or gone since read: read again
		case err != nil:
			return patched, fmt.Errorf("set the caBundle of MutatingWebhookConfiguration %s: %w", c.name, err)
		}
		patched = true
		l.cfg.Metrics.certificateStep("ca_bundle")
		l.cfg.Log.Info("set the caBundle", "configuration", c.name, "webhooks", len(ops)-1, "cas", bytes.Count(bundle, []byte("BEGIN CERTIFICATE")))
	}
	return patched, nil
}
