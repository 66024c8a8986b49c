package cluster

import (
	"fmt"
	"os"
	"path/filepath"
)

// WebhookClientAddr is the one webhook address to which the API server
// presents a client certificate: its admission-control kubeconfig names
// no other, so every other webhook is called as without it. A test serves
// there a webhook that requires the certificate (--client-ca-file).
const WebhookClientAddr = "127.0.0.1:16444"

// WebhookClientCA is the file of the CA that signed the API server's
// client certificate for webhooks: a CA of its own, not the cluster's.
func (c *Cluster) WebhookClientCA() string { return filepath.Join(c.pki(), "webhook-client-ca.crt") }

func (p paths) admissionConfig() string { return filepath.Join(p.pki(), "admission.yaml") }

// writeAdmissionConfig writes the API server's --admission-control-config-file:
// the webhook admission plugins read a kubeconfig whose one user, named
// WebhookClientAddr, holds a client certificate from a CA of its own.
func writeAdmissionConfig(p paths) error {
	authority, err := newCA("job-signal-e2e-webhook-client-ca")
	if err != nil {
		return err
	}
	cert, key, err := authority.issue("kube-apiserver-webhook-client", nil)
	if err != nil {
		return err
	}
	dir := p.pki()
	kubeconfig := filepath.Join(dir, "admission-kubeconfig.yaml")
	files := map[string][]byte{
		"webhook-client-ca.crt": authority.certPEM,
		"webhook-client.crt":    cert,
		"webhook-client.key":    key,
		"admission-kubeconfig.yaml": fmt.Appendf(nil, `apiVersion: v1
kind: Config
users:
- name: %q
  user:
    client-certificate: %s
    client-key: %s
`, WebhookClientAddr, filepath.Join(dir, "webhook-client.crt"), filepath.Join(dir, "webhook-client.key")),
	}
	var plugins string
	for _, name := range []string{"MutatingAdmissionWebhook", "ValidatingAdmissionWebhook"} {
		plugins += fmt.Sprintf(`- name: %s
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: %s
`, name, kubeconfig)
	}
	files["admission.yaml"] = []byte("apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n" + plugins)
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o600); err != nil {
			return err
		}
	}
	return nil
}
