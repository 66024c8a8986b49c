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
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/testing/webhookobjects"
	"github.com/job-signal/job-signal/internal/webhook"
)

// shipped are the objects of manifests/webhook/webhook.yaml.
type shipped struct {
	deployment *appsv1.Deployment
	config     *admissionregistrationv1.MutatingWebhookConfiguration
	pdb        *policyv1.PodDisruptionBudget
	network    *networkingv1.NetworkPolicy
	roles      map[string]*rbacv1.ClusterRole
	bindings   []*rbacv1.ClusterRoleBinding
	// nsRoles and nsBindings: none (the webhook creates nothing).
	nsRoles    []*rbacv1.Role
	nsBindings []*rbacv1.RoleBinding
	policy     *admissionregistrationv1.ValidatingAdmissionPolicy
	// podHooks are the configuration's webhooks for Pods; the others are
	// for Jobs (their podFailurePolicy).
	podHooks []admissionregistrationv1.MutatingWebhook
}

func readShipped(t *testing.T) shipped {
	t.Helper()
	data, err := os.ReadFile("../../manifests/webhook/webhook.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r := webhookobjects.Decode(t, string(data))
	s := shipped{deployment: r.Deployment, config: r.Config, pdb: r.PDB, network: r.NetworkPolicy, roles: r.ClusterRoles,
		bindings: r.ClusterRoleBindings, nsRoles: r.RoleList, nsBindings: r.RoleBindings, policy: r.Policy}
	if s.deployment == nil || s.config == nil || s.network == nil || s.policy == nil {
		t.Fatal("webhook.yaml lacks the Deployment, the MutatingWebhookConfiguration, the NetworkPolicy or the ValidatingAdmissionPolicy")
	}
	for _, w := range s.config.Webhooks {
		if len(w.Rules) == 1 && slices.Equal(w.Rules[0].Resources, []string{"pods"}) {
			s.podHooks = append(s.podHooks, w)
		}
	}
	if len(s.podHooks) == 0 {
		t.Fatal("webhook.yaml registers no webhook for Pods")
	}
	return s
}

// TestManifests checks manifests/webhook/webhook.yaml against the program
// and the policy: its flags exist, the API server's timeout leaves room
// for the registry timeout, the failure policy is the same in the
// configuration and in the webhook, only Pods of more than one container
// are sent, never those of kube-system or the webhook's own namespace,
// and two replicas run on different nodes where there are several.
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
	spread := pod.Spec.TopologySpreadConstraints
	if *s.deployment.Spec.Replicas < 2 || len(spread) != 1 || spread[0].WhenUnsatisfiable != corev1.DoNotSchedule || spread[0].TopologyKey != corev1.LabelHostname {
		t.Errorf("want 2 replicas spread strictly across nodes: %d, %+v", *s.deployment.Spec.Replicas, spread)
	}
	// A budget that keeps one replica blocks the drain of a single node
	// for ever (README, "Drains, upgrades and uninstall"): none by default.
	if s.pdb != nil {
		t.Errorf("a PodDisruptionBudget is shipped: %+v", s.pdb.Spec)
	}
	if len(s.podHooks) != 2 {
		t.Fatalf("%d webhooks for Pods", len(s.podHooks))
	}
	for _, w := range s.podHooks {
		if w.FailurePolicy == nil || string(*w.FailurePolicy) != cmd.FailurePolicy {
			t.Errorf("%s: failurePolicy %v, the webhook's is %s: they must agree", w.Name, w.FailurePolicy, cmd.FailurePolicy)
		}
		if !slices.Equal(w.MatchConditions, s.podHooks[0].MatchConditions) {
			t.Errorf("%s: its matchConditions differ from %s's", w.Name, s.podHooks[0].Name)
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

// TestMatchConditions: the registration's conditions, which the API
// server evaluates (e2e's TestWebhookSendsOnlyPodsThatCanNeedIt proves
// them there, case by case), name what inject and Decide name: the label,
// the owner, the record annotation, the wrappers' paths, the layout's
// volumes. A rename in inject that the registration missed fails here.
func TestMatchConditions(t *testing.T) {
	s := readShipped(t)
	want := map[string][]string{
		"job-pod-or-labelled":       {"'Job'", "'batch/v1'", "'" + inject.LabelInject + "'", "'enabled'", "has(object.metadata.ownerReferences)", "has(object.metadata.labels)"},
		"restart-policy-not-always": {"'Always'", "!has(object.spec.restartPolicy)"},
		"more-than-one-container":   {"object.spec.containers.size() > 1", "has(object.spec.containers)"},
		"not-injected-yet":          {"'" + inject.AnnotationInjected + "'", "'" + inject.JobSignalPath + "'", "'" + inject.SidecarWatchPath + "'", "!has(object.metadata.annotations)", "!has(c.command)"},
		"not-wired-by-hand":         {"'" + inject.AnnotationInjected + "'", "'" + inject.StateVolume + "'", "'" + inject.BinVolume + "'", "!has(object.spec.volumes)"},
	}
	got := s.podHooks[0].MatchConditions
	if len(got) != len(want) {
		t.Errorf("%d matchConditions, want %d", len(got), len(want))
	}
	for _, c := range got {
		needles, ok := want[c.Name]
		if !ok {
			t.Errorf("an unknown matchCondition %s", c.Name)
		}
		for _, n := range needles {
			if !strings.Contains(c.Expression, n) {
				t.Errorf("%s: %q lacks %s", c.Name, c.Expression, n)
			}
		}
	}
	opt := s.podHooks[0].ObjectSelector
	if len(opt.MatchExpressions) != 1 || opt.MatchExpressions[0].Key != inject.LabelInject || opt.MatchExpressions[0].Operator != metav1.LabelSelectorOpNotIn || !slices.Equal(opt.MatchExpressions[0].Values, []string{"disabled"}) {
		t.Errorf("%s: want Pods labelled %s=disabled left out: %+v", s.podHooks[0].Name, inject.LabelInject, opt)
	}
}

// TestPolicyNames: the ValidatingAdmissionPolicy that refuses a Job's Pod
// that would never end (e2e's TestPolicyRefusesPodsThatWouldHang proves
// it through the API server) names what inject names: the record, the
// skip, the ignore annotation, the wrappers' paths, the layout's volumes.
func TestPolicyNames(t *testing.T) {
	s := readShipped(t)
	var text strings.Builder
	for _, c := range s.policy.Spec.MatchConditions {
		text.WriteString(c.Expression + "\n")
	}
	for _, v := range s.policy.Spec.Variables {
		text.WriteString(v.Expression + "\n")
	}
	for _, needle := range []string{"'" + inject.AnnotationInjected + "'", "'" + inject.AnnotationSkipped + "'", "'" + inject.Prefix + "ignore'",
		"'" + inject.JobSignalPath + "'", "'" + inject.SidecarWatchPath + "'",
		"'" + inject.StateVolume + "'", "'" + inject.BinVolume + "'", "'Job'", "'batch/v1'", "'Always'"} {
		if !strings.Contains(text.String(), needle) {
			t.Errorf("the policy's conditions and variables lack %s", needle)
		}
	}
	if len(s.policy.Spec.Validations) != 1 || s.policy.Spec.Validations[0].MessageExpression == "" || s.policy.Spec.Validations[0].Message == "" {
		t.Errorf("want one validation, with a message and a message expression: %+v", s.policy.Spec.Validations)
	}
}

// TestNetworkPolicy: the shipped NetworkPolicy selects the webhook's Pods,
// lets anyone reach the HTTPS port (the API server's address is the
// cluster's) and the metrics port only from labelled namespaces.
func TestNetworkPolicy(t *testing.T) {
	s := readShipped(t)
	np := s.network
	pod := s.deployment.Spec.Template
	if np.Namespace != s.deployment.Namespace || np.Spec.PodSelector.MatchLabels["app"] != pod.Labels["app"] || !slices.Equal(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) {
		t.Fatalf("the NetworkPolicy does not govern ingress to the webhook's Pods: %+v", np.Spec)
	}
	ports := map[string]int32{}
	for _, p := range pod.Spec.Containers[0].Ports {
		ports[p.Name] = p.ContainerPort
	}
	from := map[string]int{}
	for _, rule := range np.Spec.Ingress {
		for _, p := range rule.Ports {
			if p.Port == nil || ports[p.Port.String()] == 0 {
				t.Errorf("a rule for port %v, which the container does not name", p.Port)
				continue
			}
			from[p.Port.String()] = len(rule.From)
			for _, peer := range rule.From {
				if peer.NamespaceSelector == nil || len(peer.NamespaceSelector.MatchLabels) == 0 || peer.IPBlock != nil {
					t.Errorf("port %s: open to %+v, want labelled namespaces only", p.Port, peer)
				}
			}
		}
	}
	if n, ok := from["metrics"]; !ok || n == 0 {
		t.Errorf("the metrics port is open to all (%v)", from)
	}
	if n, ok := from["https"]; !ok || n != 0 {
		t.Errorf("the HTTPS port is not open to the API server (%v)", from)
	}
}

// TestRBAC: the webhook reads LimitRanges and Nodes everywhere and
// nothing else cluster-wide; the Secrets role is bound only per
// namespace, by enable-namespace.sh; it may create nothing anywhere (no
// Role at all).
func TestRBAC(t *testing.T) {
	s := readShipped(t)
	for _, b := range s.bindings {
		role := s.roles[b.RoleRef.Name]
		if role == nil {
			t.Fatalf("ClusterRoleBinding %s binds a ClusterRole not in webhook.yaml", b.Name)
		}
		for _, r := range role.Rules {
			if len(r.Resources) != 1 || (r.Resources[0] != "limitranges" && r.Resources[0] != "nodes") || !slices.Equal(r.Verbs, []string{"list", "watch"}) {
				t.Errorf("bound cluster-wide: %+v (want list and watch of limitranges and nodes only)", r)
			}
		}
	}
	secrets := s.roles["job-signal-webhook-pull-secrets"]
	if secrets == nil || len(secrets.Rules) != 1 || !slices.Equal(secrets.Rules[0].Resources, []string{"secrets"}) || !slices.Equal(secrets.Rules[0].Verbs, []string{"get"}) {
		t.Fatalf("ClusterRole job-signal-webhook-pull-secrets: %+v, want get secrets", secrets)
	}
	// Per namespace, only Events in its own namespace (about a serving
	// certificate near its expiry): the Secrets of other namespaces are
	// enable-namespace.sh's to grant, and nothing may create a Pod.
	ns := s.deployment.Namespace
	certificate := "job-signal-webhook-certificate"
	for _, r := range s.nsRoles {
		if r.Name != certificate || r.Namespace != ns || len(r.Rules) != 1 || !slices.Equal(r.Rules[0].Resources, []string{"events"}) || !slices.Equal(r.Rules[0].Verbs, []string{"create"}) {
			t.Errorf("Role %s/%s: %+v; want only %s, create on events, in %s (cert-manager makes the certificate)", r.Namespace, r.Name, r.Rules, certificate, ns)
		}
	}
	for _, b := range s.nsBindings {
		if b.Namespace != ns || b.RoleRef.Kind != "Role" || b.RoleRef.Name != certificate {
			t.Errorf("RoleBinding %s/%s binds %s %s; want Role %s, in %s", b.Namespace, b.Name, b.RoleRef.Kind, b.RoleRef.Name, certificate, ns)
		}
	}
	if len(s.nsRoles) != 1 || len(s.nsBindings) != 1 {
		t.Errorf("%d Roles and %d RoleBindings; want one of each, for Events in %s", len(s.nsRoles), len(s.nsBindings), ns)
	}
	script, err := os.ReadFile("../../manifests/webhook/enable-namespace.sh")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(script), "--clusterrole=job-signal-webhook-pull-secrets") {
		t.Error("enable-namespace.sh does not bind job-signal-webhook-pull-secrets")
	}
}
