package charts_test

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/job-signal/job-signal/internal/webhook"
)

// checkCertificate holds the serving certificate's objects to the
// webhook's flags, whatever the values. Every source: a Role in the
// webhook's namespace lets it create Events (about its certificate near
// its expiry), and its Pod's name and UID reach it. generate
// (--certificate-secret): the Secret it names is rendered, empty, and
// the Deployment mounts none; the Role reads and writes that Secret and no
// other, by name; a ClusterRole patches the configuration rendered and no
// other, by name; that configuration has no caBundle (the webhook sets
// it); the certificate is for the Service's name. Otherwise: a mounted
// Secret, no right on Secrets or configurations for the certificate.
func checkCertificate(t *testing.T, o objects, cmd webhook.Cmd) {
	t.Helper()
	ns, name := o.deployment.Namespace, o.deployment.Spec.Template.Spec.ServiceAccountName
	role := o.roles[ns+"/"+name+"-certificate"]
	if role == nil {
		t.Fatalf("no Role %s-certificate in %s", name, ns)
	}
	bound := slices.ContainsFunc(o.roleBindings, func(b *rbacv1.RoleBinding) bool {
		return b.Namespace == ns && b.RoleRef.Kind == "Role" && b.RoleRef.Name == role.Name
	})
	if !bound {
		t.Errorf("Role %s is bound to nothing", role.Name)
	}
	events := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create"}}
	secret := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{cmd.CertificateSecret},
		Verbs: []string{"get", "list", "watch", "update"}}
	wantRules := []rbacv1.PolicyRule{events}
	if cmd.CertificateSecret != "" {
		wantRules = append(wantRules, secret)
	}
	if !slices.EqualFunc(role.Rules, wantRules, sameRule) {
		t.Errorf("Role %s: %+v, want %+v", role.Name, role.Rules, wantRules)
	}
	env := map[string]string{}
	for _, e := range o.deployment.Spec.Template.Spec.Containers[0].Env {
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			env[e.Name] = e.ValueFrom.FieldRef.FieldPath
		}
	}
	if env["JOB_SIGNAL_WEBHOOK_POD_NAME"] != "metadata.name" || env["JOB_SIGNAL_WEBHOOK_POD_UID"] != "metadata.uid" {
		t.Errorf("the Pod's name and UID do not reach the webhook (--pod-name, --pod-uid): %v", env)
	}
	clusterRole := o.clusterRoles[name+"-certificate"]
	mounted := slices.ContainsFunc(o.deployment.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == "tls" })
	if cmd.CertificateSecret == "" {
		if clusterRole != nil || !mounted || cmd.TLSCertFile == "" {
			t.Errorf("a certificate from files: ClusterRole %v, mounted %v, --tls-cert-file %q", clusterRole != nil, mounted, cmd.TLSCertFile)
		}
		return
	}
	if mounted || cmd.TLSCertFile != "" {
		t.Error("the webhook manages its certificate, yet the Deployment mounts one")
	}
	rendered := slices.ContainsFunc(o.secrets, func(s *corev1.Secret) bool {
		return s.Name == cmd.CertificateSecret && s.Namespace == ns && s.Type == corev1.SecretTypeOpaque && len(s.Data) == 0 && len(s.StringData) == 0
	})
	if !rendered {
		t.Errorf("Secret %s/%s is not rendered Opaque and empty: %v", ns, cmd.CertificateSecret, o.secrets)
	}
	if !slices.Equal(cmd.WebhookConfigurations, []string{o.config.Name}) {
		t.Errorf("--webhook-configuration %v, want the configuration rendered, %s", cmd.WebhookConfigurations, o.config.Name)
	}
	config := rbacv1.PolicyRule{APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{"mutatingwebhookconfigurations"},
		ResourceNames: []string{o.config.Name}, Verbs: []string{"get", "list", "watch", "patch"}}
	if clusterRole == nil || !slices.EqualFunc(clusterRole.Rules, []rbacv1.PolicyRule{config}, sameRule) {
		t.Errorf("ClusterRole %s-certificate: %+v, want %+v", name, clusterRole, config)
	}
	for _, w := range o.config.Webhooks {
		if len(w.ClientConfig.CABundle) != 0 {
			t.Errorf("%s: a caBundle is rendered; the webhook sets it", w.Name)
		}
	}
	if svc := o.service.Name + "." + ns + ".svc"; !slices.Contains(cmd.CertificateHosts, svc) {
		t.Errorf("--certificate-hosts %v lacks the name the API server calls, %s", cmd.CertificateHosts, svc)
	}
}

func sameRule(a, b rbacv1.PolicyRule) bool {
	return slices.Equal(a.APIGroups, b.APIGroups) && slices.Equal(a.Resources, b.Resources) &&
		slices.Equal(a.ResourceNames, b.ResourceNames) && slices.Equal(a.Verbs, b.Verbs) && len(a.NonResourceURLs) == 0
}

// TestRenderedTwice: helm template renders every value set the same way
// twice (nothing generated at render time), so that Argo CD's and Flux's
// renderers find nothing changed between syncs.
func TestRenderedTwice(t *testing.T) {
	for _, values := range valueSets(t) {
		first, err := renderNow(t, values)
		if err != nil {
			t.Fatal(err)
		}
		second, err := renderNow(t, values)
		if err != nil {
			t.Fatal(err)
		}
		if first != second {
			t.Errorf("%s: helm template renders differently each time:\n%s", values, lineDiff(first, second))
		}
	}
}

// TestCertificateForURL: with the url value (a webhook served outside the
// cluster), the certificate the webhook makes is for the URL's host too.
func TestCertificateForURL(t *testing.T) {
	for url, host := range map[string]string{"https://127.0.0.1:8443/mutate": "127.0.0.1", "https://[::1]:8443/mutate": "::1",
		"https://webhook.example.com/mutate": "webhook.example.com"} {
		out, err := render(t, "", "url="+url)
		if err != nil {
			t.Fatal(err)
		}
		o := decode(t, out)
		cmd := parseArgs(t, o.deployment.Spec.Template.Spec.Containers[0])
		if !slices.Contains(cmd.CertificateHosts, host) || strings.Contains(strings.Join(cmd.CertificateHosts, ","), ":8443") {
			t.Errorf("url %s: --certificate-hosts %v, want %s among them", url, cmd.CertificateHosts, host)
		}
	}
}
