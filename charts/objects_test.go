// One test walks every object the chart renders (the webhook's flags parsed by its own parser, its reach,
// the Roles, the NetworkPolicy, the generated certificate): long because they are checked together, as one
// release, against the same values.
package charts_test

import (
	"encoding/json"
	"maps"
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
	policy       *admissionregistrationv1.ValidatingAdmissionPolicy
	bindings     []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	// podHooks and jobHooks are the configuration's webhooks for Pods and
	// for Jobs, by the selection that is their name's first part.
	podHooks, jobHooks map[string]admissionregistrationv1.MutatingWebhook
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
	o := objects{deployment: r.Deployment, config: r.Config, service: r.Service, pdb: r.PDB, netpol: r.NetworkPolicy,
		secrets: r.Secrets, roleBindings: r.RoleBindings, clusterRoles: r.ClusterRoles, roles: r.Roles, other: r.Other,
		policy: r.Policy, bindings: r.PolicyBindings, clusterBindings: r.ClusterRoleBindings, namespaces: r.Namespaces, jobs: r.Jobs,
		podHooks: map[string]admissionregistrationv1.MutatingWebhook{}, jobHooks: map[string]admissionregistrationv1.MutatingWebhook{}}
	for _, w := range r.Config.Webhooks {
		switch which, kind, _ := strings.Cut(w.Name, "."); {
		case strings.HasPrefix(kind, "inject."):
			o.podHooks[which] = w
		case strings.HasPrefix(kind, "jobs."):
			o.jobHooks[which] = w
		default:
			t.Fatalf("webhook %s: neither a Pod's (SELECTION.inject.job-signal.dev) nor a Job's (SELECTION.jobs.job-signal.dev)", w.Name)
		}
	}
	return o
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
		if w.ClientConfig.Service != nil && (w.ClientConfig.Service.Name != o.service.Name || w.ClientConfig.Service.Namespace != ns || *w.ClientConfig.Service.Path != "/mutate") {
			t.Errorf("%s: calls %s/%s%s, not the chart's Service's /mutate", w.Name, w.ClientConfig.Service.Namespace, w.ClientConfig.Service.Name, *w.ClientConfig.Service.Path)
		}
		excluded := slices.ContainsFunc(w.NamespaceSelector.MatchExpressions, func(e metav1.LabelSelectorRequirement) bool {
			return e.Key == "kubernetes.io/metadata.name" && e.Operator == metav1.LabelSelectorOpNotIn &&
				slices.Contains(e.Values, "kube-system") && slices.Contains(e.Values, ns)
		})
		if !excluded {
			t.Errorf("%s: kube-system and %s must be excluded by name", w.Name, ns)
		}
	}
	for _, w := range o.podHooks {
		if w.FailurePolicy == nil || string(*w.FailurePolicy) != cmd.FailurePolicy {
			t.Errorf("%s: failurePolicy %v, the webhook's is %s: they must agree", w.Name, w.FailurePolicy, cmd.FailurePolicy)
		}
		if w.TimeoutSeconds == nil || time.Duration(*w.TimeoutSeconds)*time.Second < cmd.RegistryTimeout+2*time.Second {
			t.Errorf("%s: timeoutSeconds %v leaves no room for --registry-timeout %s", w.Name, w.TimeoutSeconds, cmd.RegistryTimeout)
		}
	}
	mode, err := inject.ParseMode(cmd.Mode)
	if err != nil {
		t.Error(err)
	}
	checkJobHooks(t, o, mode)
	checkPolicy(t, o, cmd.FailurePolicy)
	var bound []string
	for _, b := range o.roleBindings {
		if len(b.Subjects) != 1 || b.Subjects[0].Name != pod.Spec.ServiceAccountName || b.Subjects[0].Namespace != ns {
			t.Errorf("RoleBinding in %s: subjects %+v, want the webhook's ServiceAccount", b.Namespace, b.Subjects)
		}
		if b.RoleRef.Kind == "Role" && strings.HasSuffix(b.RoleRef.Name, "-certificate") {
			continue // checkCertificate's
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
	checkReadOnly(t, o, mode != inject.ModePair)
	checkCertificate(t, o, cmd)
}

// checkJobHooks: in modes auto and native, each selection of Pods has a
// webhook for its Jobs, with the same namespaces, called only on CREATE
// of batch/v1 Jobs, never holding a Job up (Ignore, a short timeout, no
// second call); in mode pair, where the Job's policy changes nothing,
// none.
func checkJobHooks(t *testing.T, o objects, mode inject.Mode) {
	t.Helper()
	if mode == inject.ModePair {
		if len(o.jobHooks) != 0 {
			t.Errorf("mode pair: Job webhooks %v, want none", slices.Collect(maps.Keys(o.jobHooks)))
		}
		return
	}
	for which, pods := range o.podHooks {
		w, ok := o.jobHooks[which]
		if !ok {
			t.Errorf("no Job webhook for the selection %s", which)
			continue
		}
		if !equalJSON(w.NamespaceSelector, pods.NamespaceSelector) {
			t.Errorf("%s: namespaceSelector %+v, want its Pods' %+v", w.Name, w.NamespaceSelector, pods.NamespaceSelector)
		}
		if len(w.Rules) != 1 || !slices.Equal(w.Rules[0].APIGroups, []string{"batch"}) || !slices.Equal(w.Rules[0].APIVersions, []string{"v1"}) ||
			!slices.Equal(w.Rules[0].Resources, []string{"jobs"}) || !slices.Equal(w.Rules[0].Operations, []admissionregistrationv1.OperationType{admissionregistrationv1.Create}) {
			t.Errorf("%s: rules %+v, want CREATE of batch/v1 jobs", w.Name, w.Rules)
		}
		if *w.FailurePolicy != admissionregistrationv1.Ignore || *w.ReinvocationPolicy != admissionregistrationv1.NeverReinvocationPolicy || *w.TimeoutSeconds > 5 {
			t.Errorf("%s: failurePolicy %s, reinvocation %s, timeout %d s; want Ignore, Never, at most 5", w.Name, *w.FailurePolicy, *w.ReinvocationPolicy, *w.TimeoutSeconds)
		}
	}
	if len(o.jobHooks) != len(o.podHooks) {
		t.Errorf("Job webhooks %v for Pod webhooks %v", slices.Collect(maps.Keys(o.jobHooks)), slices.Collect(maps.Keys(o.podHooks)))
	}
}

// checkPolicy: the ValidatingAdmissionPolicy is bound once per selection
// of Pods, with the Pod webhook's namespace and object selectors; it
// denies with failurePolicy Fail, warns and audits with Ignore, and its
// own failurePolicy is the chart's.
func checkPolicy(t *testing.T, o objects, failurePolicy string) {
	t.Helper()
	if o.policy == nil {
		t.Fatal("no ValidatingAdmissionPolicy")
	}
	if string(*o.policy.Spec.FailurePolicy) != failurePolicy {
		t.Errorf("the policy's failurePolicy %s, the webhook's %s", *o.policy.Spec.FailurePolicy, failurePolicy)
	}
	want := []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}
	if failurePolicy == webhook.PolicyIgnore {
		want = []admissionregistrationv1.ValidationAction{admissionregistrationv1.Warn, admissionregistrationv1.Audit}
	}
	bound := map[string]bool{}
	for _, b := range o.bindings {
		which := strings.TrimPrefix(b.Name, o.deployment.Name+"-")
		pods, ok := o.podHooks[which]
		switch {
		case !ok:
			t.Errorf("binding %s: no Pod webhook of selection %s", b.Name, which)
			continue
		case b.Spec.PolicyName != o.policy.Name:
			t.Errorf("binding %s binds %s, not %s", b.Name, b.Spec.PolicyName, o.policy.Name)
		case !slices.Equal(b.Spec.ValidationActions, want):
			t.Errorf("binding %s: %v with failurePolicy %s, want %v", b.Name, b.Spec.ValidationActions, failurePolicy, want)
		}
		m := b.Spec.MatchResources
		if m == nil || !equalJSON(m.NamespaceSelector, pods.NamespaceSelector) || !equalJSON(m.ObjectSelector, pods.ObjectSelector) {
			t.Errorf("binding %s: matchResources %+v, want the selectors of %s", b.Name, m, pods.Name)
		}
		bound[which] = true
	}
	if len(bound) != len(o.podHooks) {
		t.Errorf("bindings for %v, Pod webhooks %v", slices.Collect(maps.Keys(bound)), slices.Collect(maps.Keys(o.podHooks)))
	}
}

func equalJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// checkReadOnly: the webhook's ServiceAccount can create, change or
// delete nothing but what its serving certificate needs (the Role and
// ClusterRole NAME-certificate, checkCertificate's, by name; the
// uninstall hook's NAME-unregister, checkUnregisterHook's): every rule
// of every other role is get, list or watch, and no other Role is
// rendered; it may list and watch Nodes exactly when its mode reads them
// (auto, native).
func checkReadOnly(t *testing.T, o objects, readsNodes bool) {
	t.Helper()
	ns, certificate := o.deployment.Namespace, o.deployment.Spec.Template.Spec.ServiceAccountName+"-certificate"
	for key := range o.roles {
		if key != ns+"/"+certificate {
			t.Errorf("Role %s rendered; the webhook needs none but %s", key, certificate)
		}
	}
	nodes := false
	for name, role := range o.clusterRoles {
		for _, r := range role.Rules {
			for _, v := range r.Verbs {
				if v != "get" && v != "list" && v != "watch" && name != certificate && !strings.HasSuffix(name, "-unregister") {
					t.Errorf("ClusterRole %s grants %s on %v: the webhook reads only", name, v, r.Resources)
				}
			}
			if slices.Contains(r.Resources, "nodes") {
				nodes = true
				if !slices.Equal(r.Verbs, []string{"list", "watch"}) || len(r.ResourceNames) != 0 {
					t.Errorf("ClusterRole %s: nodes %v, want list and watch", name, r.Verbs)
				}
			}
		}
	}
	if nodes != readsNodes {
		t.Errorf("may read Nodes: %v; want %v (the modes that read them: auto, native)", nodes, readsNodes)
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
				if strings.Contains(w.Name, ".inject.") {
					hooks = append(hooks, w.Name)
				}
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
			if !strings.Contains(w.Name, ".inject.") {
				continue // a Job's webhook: its namespaces are checked against its Pods' by checkJobHooks
			}
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
