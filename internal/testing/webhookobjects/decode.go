// Package webhookobjects decodes the webhook's rendered objects (the chart's
// output, manifests/webhook/webhook.yaml) strictly, by kind, for the tests
// of the chart and of the webhook: one reader of what the API server
// would be given.
package webhookobjects

import (
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// Objects are the rendered objects, decoded strictly (a misspelt field
// fails), by kind.
type Objects struct {
	Deployment          *appsv1.Deployment
	Config              *admissionregistrationv1.MutatingWebhookConfiguration
	Service             *corev1.Service
	PDB                 *policyv1.PodDisruptionBudget
	NetworkPolicy       *networkingv1.NetworkPolicy
	Secrets             []*corev1.Secret
	RoleBindings        []*rbacv1.RoleBinding
	ClusterRoleBindings []*rbacv1.ClusterRoleBinding
	ClusterRoles        map[string]*rbacv1.ClusterRole // by name
	Roles               map[string]*rbacv1.Role        // by namespace/name
	RoleList            []*rbacv1.Role                 // in the order rendered
	Policy              *admissionregistrationv1.ValidatingAdmissionPolicy
	PolicyBindings      []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
	ServiceAccounts     []*corev1.ServiceAccount
	Namespaces          []*corev1.Namespace
	Jobs                []*batchv1.Job // Helm hooks
	// Other holds the objects of other APIs (cert-manager, the Prometheus
	// Operator), by kind.
	Other map[string][]map[string]any
}

// Decode reads the documents of text. A kind this package does not know
// fails the test, unless its API is cert-manager's or the Prometheus
// Operator's.
func Decode(t testing.TB, text string) Objects {
	t.Helper()
	o := Objects{ClusterRoles: map[string]*rbacv1.ClusterRole{}, Roles: map[string]*rbacv1.Role{}, Other: map[string][]map[string]any{}}
	for _, doc := range strings.Split("\n"+text, "\n---\n") {
		var meta struct {
			Kind       string
			APIVersion string `json:"apiVersion"`
		}
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatalf("%v\n%s", err, doc)
		}
		var into any
		switch meta.Kind {
		case "":
			continue // comments only
		case "Deployment":
			o.Deployment = &appsv1.Deployment{}
			into = o.Deployment
		case "MutatingWebhookConfiguration":
			o.Config = &admissionregistrationv1.MutatingWebhookConfiguration{}
			into = o.Config
		case "ValidatingAdmissionPolicy":
			o.Policy = &admissionregistrationv1.ValidatingAdmissionPolicy{}
			into = o.Policy
		case "ValidatingAdmissionPolicyBinding":
			b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
			o.PolicyBindings = append(o.PolicyBindings, b)
			into = b
		case "Service":
			o.Service = &corev1.Service{}
			into = o.Service
		case "PodDisruptionBudget":
			o.PDB = &policyv1.PodDisruptionBudget{}
			into = o.PDB
		case "NetworkPolicy":
			o.NetworkPolicy = &networkingv1.NetworkPolicy{}
			into = o.NetworkPolicy
		case "Secret":
			s := &corev1.Secret{}
			o.Secrets = append(o.Secrets, s)
			into = s
		case "RoleBinding":
			b := &rbacv1.RoleBinding{}
			o.RoleBindings = append(o.RoleBindings, b)
			into = b
		case "ClusterRoleBinding":
			b := &rbacv1.ClusterRoleBinding{}
			o.ClusterRoleBindings = append(o.ClusterRoleBindings, b)
			into = b
		case "ClusterRole":
			into = &rbacv1.ClusterRole{}
		case "Role":
			into = &rbacv1.Role{}
		case "ServiceAccount":
			a := &corev1.ServiceAccount{}
			o.ServiceAccounts = append(o.ServiceAccounts, a)
			into = a
		case "Namespace":
			n := &corev1.Namespace{}
			o.Namespaces = append(o.Namespaces, n)
			into = n
		case "Job":
			j := &batchv1.Job{}
			o.Jobs = append(o.Jobs, j)
			into = j
		default:
			if !strings.HasPrefix(meta.APIVersion, "cert-manager.io/") && !strings.HasPrefix(meta.APIVersion, "monitoring.coreos.com/") {
				t.Fatalf("unexpected %s %s", meta.APIVersion, meta.Kind)
			}
			var m map[string]any
			if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
				t.Fatal(err)
			}
			o.Other[meta.Kind] = append(o.Other[meta.Kind], m)
			continue
		}
		if err := yaml.UnmarshalStrict([]byte(doc), into); err != nil {
			t.Fatalf("%s: %v", meta.Kind, err)
		}
		switch r := into.(type) {
		case *rbacv1.ClusterRole:
			o.ClusterRoles[r.Name] = r
		case *rbacv1.Role:
			o.Roles[r.Namespace+"/"+r.Name] = r
			o.RoleList = append(o.RoleList, r)
		}
	}
	return o
}
