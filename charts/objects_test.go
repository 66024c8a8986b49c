// One test walks every object the chart renders (the webhook's flags parsed by its own parser, its reach,
// the Roles, the NetworkPolicy, the generated certificate): long because they are checked together, as one
// release, against the same values.
package charts_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kong"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/testing/webhookobjects"
	"github.com/job-signal/job-signal/internal/webhook"
)

// objects are the rendered objects the API server would be given, decoded
// strictly (a misspelt field fails), by kind.
type objects struct {
	deployment   *appsv1.Deployment
	config       *admissionregistrationv1.MutatingWebhookConfiguration
	service      *corev1.Service
	pdb          *policyv1.PodDisruptionBudget
	netpol       *networkingv1.NetworkPolicy
	secrets      []*corev1.Secret
	roleBindings []*rbacv1.RoleBinding
	clusterRoles map[string]*rbacv1.ClusterRole
	roles        map[string]*rbacv1.Role     // by namespace/name
	other        map[string][]map[string]any // kinds of other APIs (cert-manager, the Prometheus Operator), by kind
	// clusterBindings, namespaces and jobs (Helm hooks): see operate_test.go.
	clusterBindings []*rbacv1.ClusterRoleBinding
	namespaces      []*corev1.Namespace
	jobs            []*batchv1.Job
}

func decode(t *testing.T, out string) objects {
	t.Helper()
	r := webhookobjects.Decode(t, out)
	if r.Deployment == nil || r.Config == nil || r.Service == nil {
		t.Fatal("no Deployment, MutatingWebhookConfiguration or Service rendered")
	}
	return objects{deployment: r.Deployment, config: r.Config, service: r.Service, pdb: r.PDB, netpol: r.NetworkPolicy,
		secrets: r.Secrets, roleBindings: r.RoleBindings, clusterRoles: r.ClusterRoles, roles: r.Roles, other: r.Other,
		clusterBindings: r.ClusterRoleBindings, namespaces: r.Namespaces, jobs: r.Jobs}
}

// check holds the rendered objects to what the webhook and the API server
// need of them, whatever the values: the Deployment's args and environment
// parse as the webhook's command line and agree with the configuration's
// failurePolicy and timeoutSeconds; every webhook leaves kube-system and
// its own namespace alone; the selectors select the webhook's Pods; the
// Secrets role is bound in exactly the namespaces given.
func check(t *testing.T, o objects, secretNamespaces []string) {
	t.Helper()
	pod := o.deployment.Spec.Template
	if pod.Labels["job-signal.dev/inject"] != "disabled" {
		t.Error("the webhook's own Pods must be labelled job-signal.dev/inject=disabled")
	}
	cmd := parseArgs(t, pod.Spec.Containers[0])
	podLabels := labels.Set(pod.Labels)
	matches := func(what string, sel *metav1.LabelSelector) {
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil || s.Empty() || !s.Matches(podLabels) {
			t.Errorf("%s does not select the webhook's Pods: %v %v", what, sel, err)
		}
	}
	matches("the Deployment", o.deployment.Spec.Selector)
	matches("the Service", &metav1.LabelSelector{MatchLabels: o.service.Spec.Selector})
	if o.pdb != nil {
		matches("the PodDisruptionBudget", o.pdb.Spec.Selector)
	}
	if o.netpol != nil {
		matches("the NetworkPolicy", &o.netpol.Spec.PodSelector)
		checkNetworkPolicy(t, o.netpol, pod.Spec.Containers[0])
	}
	ns := o.deployment.Namespace
	for _, w := range o.config.Webhooks {
		if w.FailurePolicy == nil || string(*w.FailurePolicy) != cmd.FailurePolicy {
			t.Errorf("%s: failurePolicy %v, the webhook's is %s: they must agree", w.Name, w.FailurePolicy, cmd.FailurePolicy)
		}
		if w.TimeoutSeconds == nil || time.Duration(*w.TimeoutSeconds)*time.Second < cmd.RegistryTimeout+2*time.Second {
			t.Errorf("%s: timeoutSeconds %v leaves no room for --registry-timeout %s", w.Name, w.TimeoutSeconds, cmd.RegistryTimeout)
		}
		excluded := slices.ContainsFunc(w.NamespaceSelector.MatchExpressions, func(e metav1.LabelSelectorRequirement) bool {
			return e.Key == "kubernetes.io/metadata.name" && e.Operator == metav1.LabelSelectorOpNotIn &&
				slices.Contains(e.Values, "kube-system") && slices.Contains(e.Values, ns)
		})
		if !excluded {
			t.Errorf("%s: kube-system and %s must be excluded by name", w.Name, ns)
		}
		if s := w.ClientConfig.Service; s != nil && (s.Name != o.service.Name || s.Namespace != ns || *s.Path != "/mutate") {
			t.Errorf("%s: calls %s/%s%s, not the chart's Service's /mutate", w.Name, s.Namespace, s.Name, *s.Path)
		}
	}
	var bound []string
	detect := 0
	for _, b := range o.roleBindings {
		if len(b.Subjects) != 1 || b.Subjects[0].Name != pod.Spec.ServiceAccountName || b.Subjects[0].Namespace != ns {
			t.Errorf("RoleBinding in %s: subjects %+v, want the webhook's ServiceAccount", b.Namespace, b.Subjects)
		}
		if b.RoleRef.Kind == "Role" && strings.HasSuffix(b.RoleRef.Name, "-certificate") {
			continue // checkCertificate's
		}
		if b.RoleRef.Kind == "Role" {
			detect++
			checkDetectRole(t, b, o.roles[b.Namespace+"/"+b.RoleRef.Name], ns)
			continue
		}
		bound = append(bound, b.Namespace)
		role := o.clusterRoles[b.RoleRef.Name]
		if role == nil || len(role.Rules) != 1 || !slices.Equal(role.Rules[0].Resources, []string{"secrets"}) || !slices.Equal(role.Rules[0].Verbs, []string{"get"}) {
			t.Errorf("RoleBinding in %s binds %s, want the role that may get secrets only", b.Namespace, b.RoleRef.Name)
		}
	}
	slices.Sort(bound)
	if !slices.Equal(bound, secretNamespaces) {
		t.Errorf("the webhook may read Secrets in %v, want %v", bound, secretNamespaces)
	}
	checkCertificate(t, o, cmd)
	mode, err := inject.ParseMode(cmd.Mode)
	switch {
	case err != nil:
		t.Error(err)
	case mode == inject.ModePair && detect != 0:
		t.Errorf("mode pair checks nothing, yet %d RoleBindings let the webhook create Pods", detect)
	case mode != inject.ModePair && (detect != 1 || cmd.Namespace != ""):
		t.Errorf("mode %s: %d RoleBindings for the dry run, --namespace=%q; want one, and the Pod's own namespace (%s)", mode, detect, cmd.Namespace, ns)
	}
}

// checkDetectRole: the one right to create anything is create on pods, in
// the webhook's own namespace, for the dry run that asks whether the API
// server keeps native sidecars.
func checkDetectRole(t *testing.T, b *rbacv1.RoleBinding, role *rbacv1.Role, ns string) {
	t.Helper()
	if b.Namespace != ns || role == nil {
		t.Errorf("RoleBinding %s/%s binds Role %s: want one in the webhook's namespace %s, of a Role there", b.Namespace, b.Name, b.RoleRef.Name, ns)
		return
	}
	if len(role.Rules) != 1 || !slices.Equal(role.Rules[0].APIGroups, []string{""}) || !slices.Equal(role.Rules[0].Resources, []string{"pods"}) ||
		!slices.Equal(role.Rules[0].Verbs, []string{"create"}) || len(role.Rules[0].ResourceNames) != 0 {
		t.Errorf("Role %s/%s: %+v, want create on pods only", role.Namespace, role.Name, role.Rules)
	}
}

// parseArgs parses the container's args with its environment, as the
// webhook does.
func parseArgs(t *testing.T, c corev1.Container) webhook.Cmd {
	t.Helper()
	for _, e := range c.Env {
		t.Setenv(e.Name, e.Value)
	}
	var cmd webhook.Cmd
	parser, err := kong.New(&cmd, kong.Vars{"image": "x"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parser.Parse(c.Args); err != nil {
		t.Fatalf("the Deployment's args do not parse as the webhook's: %v (%q)", err, c.Args)
	}
	return cmd
}

// checkNetworkPolicy: the HTTPS port is open to all (the API server), the
// metrics port only to the peers given, and the names are the container's.
func checkNetworkPolicy(t *testing.T, np *networkingv1.NetworkPolicy, c corev1.Container) {
	t.Helper()
	ports := map[string]bool{}
	for _, p := range c.Ports {
		ports[p.Name] = true
	}
	for _, rule := range np.Spec.Ingress {
		for _, p := range rule.Ports {
			if p.Port == nil || !ports[p.Port.StrVal] {
				t.Errorf("the NetworkPolicy opens port %v, which the container does not name", p.Port)
				continue
			}
			if p.Port.StrVal == "metrics" && len(rule.From) == 0 {
				t.Error("the NetworkPolicy opens the metrics port to everyone")
			}
			if p.Port.StrVal == "https" && len(rule.From) != 0 {
				t.Error("the NetworkPolicy limits the HTTPS port: the API server may come from any address")
			}
		}
	}
}

// TestObjects renders the value sets and holds each to check.
func TestObjects(t *testing.T) {
	for _, tc := range []struct {
		values   string
		secrets  []string // namespaces where the webhook may read Secrets
		hooks    []string // the configuration's webhooks
		listed   []string // the value namespaces
		labelled bool     // the value labelledNamespaces
	}{
		{"ci/defaults-values.yaml", nil, []string{"namespaces.inject.job-signal.dev", "pods.inject.job-signal.dev"}, nil, true},
		{"ci/namespaces-values.yaml", []string{"batch", "etl", "reports"},
			[]string{"listed-namespaces.inject.job-signal.dev", "namespaces.inject.job-signal.dev", "pods.inject.job-signal.dev"},
			[]string{"batch", "etl"}, true},
		{"ci/cert-manager-values.yaml", []string{"batch"},
			[]string{"listed-namespaces.inject.job-signal.dev", "namespaces.inject.job-signal.dev", "pods.inject.job-signal.dev"},
			[]string{"batch"}, true},
		{"ci/secret-values.yaml", nil, []string{"pods.inject.job-signal.dev"}, nil, false},
		{plainValues, nil, []string{"namespaces.inject.job-signal.dev", "pods.inject.job-signal.dev"}, nil, true},
	} {
		t.Run(tc.values, func(t *testing.T) {
			out, err := render(t, tc.values)
			if err != nil {
				t.Fatal(err)
			}
			o := decode(t, out)
			check(t, o, tc.secrets)
			var hooks []string
			for _, w := range o.config.Webhooks {
				hooks = append(hooks, w.Name)
			}
			if !slices.Equal(hooks, tc.hooks) {
				t.Errorf("webhooks %v, want %v", hooks, tc.hooks)
			}
			checkReach(t, o.config, tc.listed, tc.labelled)
		})
	}
}

// checkReach evaluates the webhooks' namespace and object selectors, as
// the API server does, for Pods in namespaces of every kind: a Pod is sent
// to one webhook at most (never injected twice in one pass), never from
// kube-system or the webhook's own namespace, never when labelled
// disabled; a listed namespace's Pods always, a labelled one's when
// labelledNamespaces is on, a Pod labelled enabled anywhere else.
func checkReach(t *testing.T, config *admissionregistrationv1.MutatingWebhookConfiguration, listed []string, labelled bool) {
	t.Helper()
	reach := func(ns string, nsLabel, podLabel string) []string {
		nsLabels := labels.Set{"kubernetes.io/metadata.name": ns}
		if nsLabel != "" {
			nsLabels["job-signal.dev/inject"] = nsLabel
		}
		podLabels := labels.Set{}
		if podLabel != "" {
			podLabels["job-signal.dev/inject"] = podLabel
		}
		var out []string
		for _, w := range config.Webhooks {
			nsSel, err1 := metav1.LabelSelectorAsSelector(w.NamespaceSelector)
			objSel, err2 := metav1.LabelSelectorAsSelector(w.ObjectSelector)
			if err1 != nil || err2 != nil {
				t.Fatalf("%s: %v %v", w.Name, err1, err2)
			}
			if nsSel.Matches(nsLabels) && objSel.Matches(podLabels) {
				out = append(out, w.Name)
			}
		}
		return out
	}
	for _, ns := range []string{"kube-system", namespace, "batch", "etl", "other"} {
		for _, nsLabel := range []string{"", "enabled"} {
			for _, podLabel := range []string{"", "enabled", "disabled"} {
				got := reach(ns, nsLabel, podLabel)
				var want bool
				switch {
				case ns == "kube-system" || ns == namespace || podLabel == "disabled":
				case slices.Contains(listed, ns):
					want = true
				case nsLabel == "enabled" && labelled:
					want = true
				case podLabel == "enabled":
					want = true
				}
				if len(got) > 1 || (len(got) == 1) != want {
					t.Errorf("a Pod labelled %q in namespace %s labelled %q reaches %v; want %s", podLabel, ns, nsLabel, got,
						map[bool]string{true: "one webhook", false: "none"}[want])
				}
			}
		}
	}
}

// TestValueErrors: values that cannot work are refused when rendering,
// naming the value and the fix.
func TestValueErrors(t *testing.T) {
	for _, tc := range []struct {
		set  []string
		want string
	}{
		{[]string{"failurePolicy=fail"}, "failurePolicy"},
		{[]string{"namespaces={kube-system}"}, "namespaces: kube-system is never sent"},
		{[]string{"namespaces={" + namespace + "}"}, "namespaces: " + namespace + " is never sent"},
		{[]string{"namespaces={Batch}"}, "namespaces"},
		{[]string{"certificates.source=secret"}, "set certificates.caBundle"},
		{[]string{"clientAuth.enabled=true"}, "set clientAuth.caSecret or clientAuth.caConfigMap"},
		{[]string{"timeoutSeconds=60"}, "timeoutSeconds"},
		{[]string{"registryTimeout=5"}, "registryTimeout"},
		{[]string{"mode=sidecars"}, "mode"},
		{[]string{"detectInterval=10"}, "detectInterval"},
		{[]string{"labelledNamespaces=false", "labelledPods=false"}, "no Pod would ever be sent"},
		{[]string{"podDisruptionBudget.minAvailable=1"}, "minAvailable"},
		{[]string{"shutdownDelaySeconds=0"}, "shutdownDelaySeconds"},
		{[]string{"certificates.generate.renew=true"}, "certificates.generate.renew: the webhook renews"},
		{[]string{"certificates.generate.validityDays=30"}, "validityDays"},
	} {
		_, err := render(t, "", tc.set...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--set %v: %v, want an error naming %q", tc.set, err, tc.want)
		}
	}
}
