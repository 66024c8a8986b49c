package webhook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/job-signal/job-signal/internal/kubeapi"
	"github.com/job-signal/job-signal/internal/servingcert"
)

// The serving certificate's flags: from files (--tls-cert-file), or kept
// by the webhook itself (--certificate-secret, ManageCertificate).

// validateCertificate checks that one source of the serving certificate
// is given, and complete.
func (c *Cmd) validateCertificate() error {
	files := c.TLSCertFile != "" || c.TLSKeyFile != ""
	switch {
	case c.CertificateSecret == "" && (c.TLSCertFile == "" || c.TLSKeyFile == ""):
		return errors.New("--tls-cert-file and --tls-key-file, or --certificate-secret: the serving certificate's files, or the Secret where the webhook keeps its own")
	case c.CertificateSecret != "" && files:
		return errors.New("--certificate-secret and --tls-cert-file/--tls-key-file: give one source of the serving certificate")
	case c.CertificateSecret == "":
		if len(c.WebhookConfigurations) > 0 || len(c.CertificateHosts) > 0 {
			return errors.New("--webhook-configuration and --certificate-hosts go with --certificate-secret only")
		}
		return nil
	}
	if errs := validation.IsDNS1123Subdomain(c.CertificateSecret); len(errs) > 0 {
		return fmt.Errorf("--certificate-secret %q: not a Secret's name: %s", c.CertificateSecret, errs[0])
	}
	if len(c.WebhookConfigurations) == 0 {
		return errors.New("--certificate-secret: name the MutatingWebhookConfiguration to put its CA in with --webhook-configuration")
	}
	for _, name := range c.WebhookConfigurations {
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
			return fmt.Errorf("--webhook-configuration %q: not a configuration's name: %s", name, errs[0])
		}
	}
	if len(c.CertificateHosts) == 0 {
		return errors.New("--certificate-secret: name the hosts the API server calls with --certificate-hosts (a Service's SERVICE.NAMESPACE.svc)")
	}
	for _, h := range c.CertificateHosts {
		if net.ParseIP(h) == nil && len(validation.IsDNS1123Subdomain(h)) > 0 {
			return fmt.Errorf("--certificate-hosts: %q is neither a DNS name nor an IP address", h)
		}
	}
	if c.CertificateValidity < servingcert.MinValidity {
		return fmt.Errorf("--certificate-validity: at least %s, got %s", servingcert.MinValidity, c.CertificateValidity)
	}
	return nil
}

// firstCertificate bounds the wait for the managed certificate at start:
// a few requests to the API server.
const firstCertificate = 30 * time.Second

// listen binds the HTTPS listener with the serving certificate from its
// source: the files, or the Secret the webhook manages (its loop started
// here, until ctx ends; the listener binds once it serves a certificate).
func (c *Cmd) listen(ctx context.Context, api apiReaders, cfg *Config, log *slog.Logger) (*Server, error) {
	if c.CertificateSecret == "" {
		return Listen(c.Listen, c.TLSCertFile, c.TLSKeyFile, cfg, log)
	}
	if api.config == nil {
		return nil, errors.New("--certificate-secret: the webhook manages its certificate through the API server: run it in a Pod or give --kubeconfig")
	}
	m := ManagedCertificate{Namespace: api.namespace, Secret: c.CertificateSecret, Configurations: c.WebhookConfigurations,
		Want: servingcert.Want{Hosts: c.CertificateHosts, Validity: c.CertificateValidity}}
	var err error
	if m.WatchCore, err = kubeapi.CoreClient(api.config); err == nil {
		if m.WatchAdmission, err = kubeapi.AdmissionClient(api.config); err == nil {
			bounded := kubeapi.Bounded(api.config, maxCertificateAnswer)
			if m.Core, err = kubeapi.CoreClient(bounded); err == nil {
				m.Admission, err = kubeapi.AdmissionClient(bounded)
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("--certificate-secret: %w", err)
	}
	serving := NewServing()
	go cfg.ManageCertificate(ctx, m, serving)
	if err := WaitServing(ctx, serving, firstCertificate); err != nil {
		return nil, fmt.Errorf("--certificate-secret %s/%s: %w (the log says why)", m.Namespace, m.Secret, err)
	}
	return ListenServing(c.Listen, serving, cfg, log)
}

// maxCertificateAnswer bounds each answer the certificate's loop reads: a
// Secret of a few certificates, a webhook configuration of a few KiB.
const maxCertificateAnswer = 1 << 20

// certificateSource names where the serving certificate comes from, for
// the log.
func (c *Cmd) certificateSource() string {
	if c.CertificateSecret != "" {
		return "managed:" + c.CertificateSecret
	}
	return "files"
}

// ownNamespace is --namespace, else the Pod's own namespace in a cluster,
// else the --kubeconfig context's (as kubectl reads it: default if none).
func (c *Cmd) ownNamespace() (string, error) {
	if c.Namespace != "" {
		return c.Namespace, nil
	}
	if c.Kubeconfig != "" {
		ns, _, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
			&clientcmd.ClientConfigLoadingRules{ExplicitPath: c.Kubeconfig}, &clientcmd.ConfigOverrides{}).Namespace()
		if err != nil {
			return "", fmt.Errorf("--kubeconfig: its namespace: %w", err)
		}
		return ns, nil
	}
	f, err := os.Open(serviceAccountNamespace)
	if err != nil {
		return "", fmt.Errorf("the webhook's namespace: give --namespace (%w)", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 256)) // a namespace's name is at most 63 bytes
	if ns := strings.TrimSpace(string(b)); err == nil && ns != "" {
		return ns, nil
	}
	return "", fmt.Errorf("the webhook's namespace: %s is empty or unreadable (%v): give --namespace", serviceAccountNamespace, err)
}

// serviceAccountNamespace is where a Pod reads its namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
