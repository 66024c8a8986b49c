//go:build e2e

package e2e

import (
	"bytes"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/job-signal/job-signal/tools/helmtool"
)

// The webhook's objects as an operator installs them: the Helm chart
// charts/job-signal-webhook, rendered by helm template (the helm command
// tools/helm pins, built by tools/helmtool) as `helm install
// job-signal-webhook charts/job-signal-webhook -n job-signal-system
// --create-namespace` would create them on this cluster's version.
const (
	chartRelease   = "job-signal-webhook"
	chartNamespace = "job-signal-system"
)

// renderChart is helm template of the chart with --set pairs; source
// names it in errors.
func renderChart(t *testing.T, set ...string) (source string, objects []runtime.Object) {
	t.Helper()
	repo := filepath.Dir(mustGetwd())
	tools, err := helmtool.Build(repo)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"template", chartRelease, filepath.Join(repo, "charts", "job-signal-webhook"),
		"--namespace", chartNamespace, "--kube-version", kube.Version().Kube}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	cmd := exec.CommandContext(t.Context(), tools.Helm, args...)
	home := t.TempDir() // helm's own folders: nothing of the user's, no cluster
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home+"/cache", "HELM_CONFIG_HOME="+home+"/config",
		"HELM_DATA_HOME="+home+"/data", "KUBECONFIG="+home+"/none")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	source = "helm " + strings.Join(args, " ")
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", source, err, stderr.String())
	}
	return source, decodeAll(t, source, stdout.Bytes())
}

// chartAdmission is what the chart registers with the API server: the
// MutatingWebhookConfiguration and the ValidatingAdmissionPolicy with its
// bindings.
type chartAdmission struct {
	config   *admissionregistrationv1.MutatingWebhookConfiguration
	policy   *admissionregistrationv1.ValidatingAdmissionPolicy
	bindings []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
}

// chartRegistration is the chart's admission objects for a webhook served
// at url whose certificate caPEM signed (the chart's url and
// certificates.source=secret values), with failurePolicy policy (empty:
// the chart's default).
func chartRegistration(t *testing.T, url string, caPEM []byte, policy admissionregistrationv1.FailurePolicyType) chartAdmission {
	t.Helper()
	set := []string{"url=" + url, "certificates.source=secret", "certificates.caBundle=" + base64.StdEncoding.EncodeToString(caPEM)}
	if policy != "" {
		set = append(set, "failurePolicy="+string(policy))
	}
	source, objects := renderChart(t, set...)
	var found []*admissionregistrationv1.MutatingWebhookConfiguration
	var a chartAdmission
	for _, obj := range objects {
		switch o := obj.(type) {
		case *admissionregistrationv1.MutatingWebhookConfiguration:
			found = append(found, o)
		case *admissionregistrationv1.ValidatingAdmissionPolicy:
			a.policy = o
		case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
			a.bindings = append(a.bindings, o)
		}
	}
	if len(found) != 1 || a.policy == nil || len(a.bindings) == 0 {
		t.Fatalf("%s: %d MutatingWebhookConfigurations, policy %v, %d bindings; want 1, one and some", source, len(found), a.policy != nil, len(a.bindings))
	}
	for _, w := range found[0].Webhooks {
		if w.ClientConfig.URL == nil || *w.ClientConfig.URL != url || w.ClientConfig.Service != nil {
			t.Fatalf("%s: webhook %s is not registered by the url value: %+v", source, w.Name, w.ClientConfig)
		}
	}
	a.config = found[0]
	return a
}
