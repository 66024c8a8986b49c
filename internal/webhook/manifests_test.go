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
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/webhook"
)

// shipped are the objects of manifests/webhook/webhook.yaml.
type shipped struct {
	deployment *appsv1.Deployment
	config     *admissionregistrationv1.MutatingWebhookConfiguration
	pdb        *policyv1.PodDisruptionBudget
	roles      map[string]*rbacv1.ClusterRole
	bindings   []*rbacv1.ClusterRoleBinding
}

func readShipped(t *testing.T) shipped {
	t.Helper()
	data, err := os.ReadFile("../../manifests/webhook/webhook.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := shipped{roles: map[string]*rbacv1.ClusterRole{}}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var meta struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatal(err)
		}
		var into any
		switch meta.Kind {
		case "Deployment":
			s.deployment = &appsv1.Deployment{}
			into = s.deployment
		case "MutatingWebhookConfiguration":
			s.config = &admissionregistrationv1.MutatingWebhookConfiguration{}
			into = s.config
		case "PodDisruptionBudget":
			s.pdb = &policyv1.PodDisruptionBudget{}
			into = s.pdb
		case "ClusterRole":
			into = &rbacv1.ClusterRole{}
		case "ClusterRoleBinding":
			b := &rbacv1.ClusterRoleBinding{}
			into = b
			s.bindings = append(s.bindings, b)
		case "Role", "RoleBinding":
			t.Fatalf("webhook.yaml has a %s: per-namespace access is enable-namespace.sh's", meta.Kind)
		default:
			continue
		}
		if err := yaml.UnmarshalStrict([]byte(doc), into); err != nil {
			t.Fatalf("%s: %v", meta.Kind, err)
		}
		if role, ok := into.(*rbacv1.ClusterRole); ok {
			s.roles[role.Name] = role
		}
	}
	if s.deployment == nil || s.config == nil || s.pdb == nil {
		t.Fatal("webhook.yaml lacks the Deployment, the MutatingWebhookConfiguration or the PodDisruptionBudget")
	}
	return s
}

// TestManifests checks manifests/webhook/webhook.yaml against the program
// and the policy: its flags exist, the API server's timeout leaves room
// for the registry timeout, the failure policy is the same in the
// configuration and in the webhook, only Pods of more than one container
// are sent, never those of kube-system or the webhook's own namespace,
// and two replicas on different nodes are kept through disruptions.
func TestManifests(t *testing.T) {
	s := readShipped(t)
	pod := s.deployment.Spec.Template
	if pod.Labels[inject.LabelInject] != "disabled" {
		t.Error("the webhook's own Pods must be labelled disabled")
	}
	c := pod.Spec.Containers[0]
	for _, e := range c.Env {
		os.Setenv(e.Name, e.Value)
		defer os.Unsetenv(e.Name)
	}
	var cmd webhook.Cmd
	parser, err := kong.New(&cmd, kong.Vars{"image": "x"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parser.Parse(c.Args); err != nil {
		t.Fatalf("the Deployment's args do not parse: %v", err)
	}
	if cmd.FailurePolicy != webhook.PolicyFail || cmd.MetricsListen == "" {
		t.Errorf("the webhook's failure policy is %s (want Fail), metrics on %q", cmd.FailurePolicy, cmd.MetricsListen)
	}
	if *s.deployment.Spec.Replicas < 2 || len(pod.Spec.TopologySpreadConstraints) == 0 {
		t.Error("want 2 replicas spread across nodes")
	}
	if s.pdb.Spec.MinAvailable == nil || s.pdb.Spec.MinAvailable.IntValue() < 1 || s.pdb.Spec.Selector.MatchLabels["app"] != pod.Labels["app"] {
		t.Errorf("the PodDisruptionBudget must keep one of the webhook's Pods: %+v", s.pdb.Spec)
	}
	if len(s.config.Webhooks) != 2 {
		t.Fatalf("%d webhooks", len(s.config.Webhooks))
	}
	for _, w := range s.config.Webhooks {
		if w.FailurePolicy == nil || string(*w.FailurePolicy) != cmd.FailurePolicy {
			t.Errorf("%s: failurePolicy %v, the webhook's is %s: they must agree", w.Name, w.FailurePolicy, cmd.FailurePolicy)
		}
		if len(w.MatchConditions) != 1 || w.MatchConditions[0].Expression != "object.spec.containers.size() > 1" {
			t.Errorf("%s: want only Pods of more than one container: %+v", w.Name, w.MatchConditions)
		}
		if w.TimeoutSeconds == nil || time.Duration(*w.TimeoutSeconds)*time.Second < cmd.RegistryTimeout+2*time.Second {
			t.Errorf("%s: timeoutSeconds leaves no room for --registry-timeout %s", w.Name, cmd.RegistryTimeout)
		}
		if w.ClientConfig.Service == nil || *w.ClientConfig.Service.Path != "/mutate" || w.NamespaceSelector == nil || w.ObjectSelector == nil {
			t.Errorf("%s: want the /mutate service path and both selectors", w.Name)
		}
		excluded := slices.ContainsFunc(w.NamespaceSelector.MatchExpressions, func(e metav1.LabelSelectorRequirement) bool {
			return e.Key == "kubernetes.io/metadata.name" && e.Operator == "NotIn" &&
				slices.Contains(e.Values, "kube-system") && slices.Contains(e.Values, s.deployment.Namespace)
		})
		if !excluded {
			t.Errorf("%s: kube-system and %s must be excluded by name", w.Name, s.deployment.Namespace)
		}
	}
}

// TestRBAC: the webhook reads LimitRanges everywhere and nothing else
// cluster-wide; the Secrets role is bound only per namespace, by
// enable-namespace.sh.
func TestRBAC(t *testing.T) {
	s := readShipped(t)
	for _, b := range s.bindings {
		role := s.roles[b.RoleRef.Name]
		if role == nil {
			t.Fatalf("ClusterRoleBinding %s binds a ClusterRole not in webhook.yaml", b.Name)
		}
		for _, r := range role.Rules {
			if !slices.Equal(r.Resources, []string{"limitranges"}) || slices.ContainsFunc(r.Verbs, func(v string) bool { return v != "list" && v != "watch" }) {
				t.Errorf("bound cluster-wide: %+v (want list and watch of limitranges only)", r)
			}
		}
	}
	secrets := s.roles["job-signal-webhook-pull-secrets"]
	if secrets == nil || len(secrets.Rules) != 1 || !slices.Equal(secrets.Rules[0].Resources, []string{"secrets"}) || !slices.Equal(secrets.Rules[0].Verbs, []string{"get"}) {
		t.Fatalf("ClusterRole job-signal-webhook-pull-secrets: %+v, want get secrets", secrets)
	}
	script, err := os.ReadFile("../../manifests/webhook/enable-namespace.sh")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(script), "--clusterrole=job-signal-webhook-pull-secrets") {
		t.Error("enable-namespace.sh does not bind job-signal-webhook-pull-secrets")
	}
}
