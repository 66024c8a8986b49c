package webhook_test

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kong"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/webhook"
)

// TestManifests checks manifests/webhook/webhook.yaml against the program:
// its flags exist, the API server's timeout leaves room for the registry
// timeout, no Pod is blocked, and RBAC allows reading Secrets only.
func TestManifests(t *testing.T) {
	data, err := os.ReadFile("../../manifests/webhook/webhook.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var deployment *appsv1.Deployment
	var config *admissionregistrationv1.MutatingWebhookConfiguration
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var meta struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatal(err)
		}
		var into any
		switch meta.Kind {
		case "Deployment":
			deployment = &appsv1.Deployment{}
			into = deployment
		case "MutatingWebhookConfiguration":
			config = &admissionregistrationv1.MutatingWebhookConfiguration{}
			into = config
		case "ClusterRole":
			var role rbacv1.ClusterRole
			if err := yaml.UnmarshalStrict([]byte(doc), &role); err != nil {
				t.Fatal(err)
			}
			want := []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}}}
			if len(role.Rules) != 1 || !slices.Equal(role.Rules[0].Verbs, want[0].Verbs) || !slices.Equal(role.Rules[0].Resources, want[0].Resources) {
				t.Errorf("ClusterRole rules %+v, want get secrets only", role.Rules)
			}
			continue
		default:
			continue
		}
		if err := yaml.UnmarshalStrict([]byte(doc), into); err != nil {
			t.Fatalf("%s: %v", meta.Kind, err)
		}
	}
	if deployment == nil || config == nil {
		t.Fatal("webhook.yaml lacks the Deployment or the MutatingWebhookConfiguration")
	}
	pod := deployment.Spec.Template
	if pod.Labels[inject.LabelInject] != "disabled" {
		t.Error("the webhook's own Pods must be labelled disabled")
	}
	var cmd webhook.Cmd
	parser, err := kong.New(&cmd, kong.Vars{"image": "x"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parser.Parse(pod.Spec.Containers[0].Args); err != nil {
		t.Fatalf("the Deployment's args do not parse: %v", err)
	}
	if len(config.Webhooks) != 2 {
		t.Fatalf("%d webhooks", len(config.Webhooks))
	}
	for _, w := range config.Webhooks {
		if w.FailurePolicy == nil || *w.FailurePolicy != admissionregistrationv1.Ignore {
			t.Errorf("%s: failurePolicy must be Ignore: a Pod is never blocked", w.Name)
		}
		if w.TimeoutSeconds == nil || time.Duration(*w.TimeoutSeconds)*time.Second < cmd.RegistryTimeout+2*time.Second {
			t.Errorf("%s: timeoutSeconds leaves no room for --registry-timeout %s", w.Name, cmd.RegistryTimeout)
		}
		if w.ClientConfig.Service == nil || *w.ClientConfig.Service.Path != "/mutate" || w.NamespaceSelector == nil || w.ObjectSelector == nil {
			t.Errorf("%s: want the /mutate service path and both selectors", w.Name)
		}
	}
}
