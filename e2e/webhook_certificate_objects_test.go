//go:build e2e

// long because the rotation test's helpers (the chart's objects, the
// rights, the replicas' logs, metrics and Events) read one another.

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/job-signal/job-signal/internal/webhook"
)

// The chart's certificate objects in the cluster, and what the test of
// the certificate's rotation reads of the replicas: their logs, metrics,
// Events, and the rights the chart gives them.

// certificateObjects is what installCertificateObjects created of the
// chart, and the webhook's certificate flags from its Deployment.
type certificateObjects struct {
	args           []string // --certificate-secret, --webhook-configuration, --certificate-hosts
	secret, config string
}

// installCertificateObjects creates the chart's objects that the webhook's
// certificate needs, as rendered (its ServiceAccount, Roles, ClusterRoles,
// their bindings, the empty Secret), and its configuration with each
// webhook's namespaceSelector also requiring namespace; all deleted when
// the test ends.
func installCertificateObjects(t *testing.T, source string, objects []runtime.Object, namespace string) certificateObjects {
	t.Helper()
	ctx, client := t.Context(), kube.Client()
	var out certificateObjects
	var deployment *corev1.PodSpec
	for _, obj := range objects {
		switch o := obj.(type) {
		case *admissionregistrationv1.MutatingWebhookConfiguration:
			out.config = o.Name
		case *appsv1.Deployment:
			deployment = &o.Spec.Template.Spec
		}
	}
	if deployment == nil {
		t.Fatalf("%s: no Deployment", source)
	}
	for _, a := range deployment.Containers[0].Args {
		for _, flag := range []string{"--certificate-secret=", "--webhook-configuration=", "--certificate-hosts="} {
			if strings.HasPrefix(a, flag) {
				out.args = append(out.args, a)
			}
		}
		if v, ok := strings.CutPrefix(a, "--certificate-secret="); ok {
			out.secret = v
		}
	}
	if len(out.args) != 3 || out.config == "" {
		t.Fatalf("%s: the Deployment's certificate flags %v, configuration %q", source, out.args, out.config)
	}
	// The release's namespace, as helm install --create-namespace makes it
	// (other tests' webhooks share it: it stays).
	_, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: chartNamespace}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	var undo []func(context.Context) error
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, f := range slices.Backward(undo) {
			if err := f(ctx); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("cleaning up the chart's objects: %v", err)
			}
		}
	})
	created := func(what string, err error, del func(context.Context) error) {
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("%s: create %s: %v", source, what, err)
		}
		if err == nil {
			undo = append(undo, del)
		}
	}
	for _, obj := range objects {
		switch o := obj.(type) {
		case *corev1.ServiceAccount:
			_, err := client.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			created("ServiceAccount "+o.Name, err, func(ctx context.Context) error {
				return client.CoreV1().ServiceAccounts(o.Namespace).Delete(ctx, o.Name, metav1.DeleteOptions{})
			})
		case *corev1.Secret:
			_, err := client.CoreV1().Secrets(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			created("Secret "+o.Name, err, func(ctx context.Context) error {
				return client.CoreV1().Secrets(o.Namespace).Delete(ctx, o.Name, metav1.DeleteOptions{})
			})
		case *rbacv1.Role:
			_, err := client.RbacV1().Roles(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			created("Role "+o.Name, err, func(ctx context.Context) error {
				return client.RbacV1().Roles(o.Namespace).Delete(ctx, o.Name, metav1.DeleteOptions{})
			})
		case *rbacv1.RoleBinding:
			_, err := client.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
			created("RoleBinding "+o.Name, err, func(ctx context.Context) error {
				return client.RbacV1().RoleBindings(o.Namespace).Delete(ctx, o.Name, metav1.DeleteOptions{})
			})
		case *rbacv1.ClusterRole:
			_, err := client.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
			created("ClusterRole "+o.Name, err, func(ctx context.Context) error {
				return client.RbacV1().ClusterRoles().Delete(ctx, o.Name, metav1.DeleteOptions{})
			})
		case *rbacv1.ClusterRoleBinding:
			_, err := client.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
			created("ClusterRoleBinding "+o.Name, err, func(ctx context.Context) error {
				return client.RbacV1().ClusterRoleBindings().Delete(ctx, o.Name, metav1.DeleteOptions{})
			})
		case *admissionregistrationv1.MutatingWebhookConfiguration:
			for i := range o.Webhooks {
				w := &o.Webhooks[i]
				if len(w.ClientConfig.CABundle) != 0 {
					t.Fatalf("%s: webhook %s has a caBundle rendered", source, w.Name)
				}
				w.NamespaceSelector.MatchExpressions = append(w.NamespaceSelector.MatchExpressions, metav1.LabelSelectorRequirement{
					Key: corev1.LabelMetadataName, Operator: metav1.LabelSelectorOpIn, Values: []string{namespace}})
			}
			hooks := client.AdmissionregistrationV1().MutatingWebhookConfigurations()
			_, err := hooks.Create(ctx, o, metav1.CreateOptions{})
			created("MutatingWebhookConfiguration "+o.Name, err, func(ctx context.Context) error {
				return hooks.Delete(ctx, o.Name, metav1.DeleteOptions{})
			})
		}
	}
	return out
}

// checkRightsByName asks the API server's authorizer what the chart's
// ServiceAccount account may do: the certificate's Secret and the
// configuration, by name, and nothing else of their kinds; Events.
func checkRightsByName(t *testing.T, account string, chart certificateObjects) {
	t.Helper()
	user := "system:serviceaccount:" + chartNamespace + ":" + account
	for _, tc := range []struct {
		attrs authorizationv1.ResourceAttributes
		want  bool
	}{
		{authorizationv1.ResourceAttributes{Namespace: chartNamespace, Verb: "get", Resource: "secrets", Name: chart.secret}, true},
		{authorizationv1.ResourceAttributes{Namespace: chartNamespace, Verb: "update", Resource: "secrets", Name: chart.secret}, true},
		{authorizationv1.ResourceAttributes{Namespace: chartNamespace, Verb: "watch", Resource: "secrets", Name: chart.secret}, true},
		{authorizationv1.ResourceAttributes{Namespace: chartNamespace, Verb: "get", Resource: "secrets", Name: "job-signal-webhook-tls"}, false},
		{authorizationv1.ResourceAttributes{Namespace: chartNamespace, Verb: "list", Resource: "secrets"}, false},
		{authorizationv1.ResourceAttributes{Namespace: chartNamespace, Verb: "create", Resource: "secrets"}, false},
		{authorizationv1.ResourceAttributes{Namespace: chartNamespace, Verb: "delete", Resource: "secrets", Name: chart.secret}, false},
		{authorizationv1.ResourceAttributes{Verb: "patch", Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations", Name: chart.config}, true},
		{authorizationv1.ResourceAttributes{Verb: "patch", Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations", Name: "job-signal-webhook"}, false},
		{authorizationv1.ResourceAttributes{Verb: "list", Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations"}, false},
		{authorizationv1.ResourceAttributes{Verb: "patch", Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations", Name: chart.config}, false},
		{authorizationv1.ResourceAttributes{Namespace: chartNamespace, Verb: "create", Resource: "events"}, true},
	} {
		review, err := kube.Client().AuthorizationV1().SubjectAccessReviews().Create(t.Context(), &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: user, Groups: []string{"system:serviceaccounts", "system:authenticated"},
				ResourceAttributes: &tc.attrs}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if review.Status.Allowed != tc.want {
			t.Errorf("%s may %s %s %q: %v, want %v", account, tc.attrs.Verb, tc.attrs.Resource, tc.attrs.Name, review.Status.Allowed, tc.want)
		}
	}
}

// certificateLine is a log line of the webhook about its certificate.
type certificateLine struct {
	Msg    string `json:"msg"`
	Step   string `json:"step"`
	Serial string `json:"serial"`
}

func certificateLines(t *testing.T, w *webhookProcess) []certificateLine {
	t.Helper()
	b, err := os.ReadFile(w.logPath)
	if err != nil {
		t.Fatal(err)
	}
	return certificateLinesOf(b)
}

// certificateLinesOf are the lines about the certificate of a replica's
// JSON log.
func certificateLinesOf(log []byte) []certificateLine {
	var out []certificateLine
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l certificateLine
		if json.Unmarshal(sc.Bytes(), &l) == nil && (l.Step != "" || l.Msg == "serving certificate") {
			out = append(out, l)
		}
	}
	return out
}

// servedSerials are the certificates the replica has served, in order.
func servedSerials(t *testing.T, w *webhookProcess) []string {
	t.Helper()
	return servedOf(certificateLines(t, w))
}

// servedOf are the certificates a replica's lines say it served, in order.
func servedOf(lines []certificateLine) []string {
	var out []string
	for _, l := range lines {
		if l.Msg == "serving certificate" {
			out = append(out, l.Serial)
		}
	}
	return out
}

// checkNoFight: of two replicas (the lines about the certificate of each),
// one issued the first certificate, each renewal was staged once and
// switched to once, and both served the same certificates in the same
// order (one may be a switch behind).
func checkNoFight(t *testing.T, replicas [2][]certificateLine) {
	t.Helper()
	steps := map[string]int{}
	var staged []string
	for _, lines := range replicas {
		for _, l := range lines {
			steps[l.Step]++
			if l.Step == "issue" || l.Step == "stage" {
				staged = append(staged, l.Serial)
			}
		}
	}
	if steps["issue"] != 1 || steps["switch"] < 2 || steps["stage"] < steps["switch"] || steps["stage"] > steps["switch"]+1 {
		t.Errorf("the replicas' steps together: %v; want one issue, and each renewal staged and switched once", steps)
	}
	if steps["prune"] < 1 {
		t.Errorf("no CA left the bundle once expired: %v", steps)
	}
	a, b := servedOf(replicas[0]), servedOf(replicas[1])
	if len(a) > len(b) {
		a, b = b, a
	}
	if !slices.Equal(a, b[:len(a)]) || len(b)-len(a) > 1 {
		t.Errorf("the replicas served %v and %v: want the same certificates", a, b)
	}
	for _, serial := range b {
		if !slices.Contains(staged, serial) {
			t.Errorf("certificate %s was served, never issued by either replica", serial)
		}
	}
}

// checkExpiryShown: the replica's metric is the expiry of the certificate
// it presents (read again if a switch falls between the two reads).
func checkExpiryShown(t *testing.T, w *webhookProcess) {
	t.Helper()
	addr := w.waitEvent(t, time.Minute, func(e webhookEvent) bool { return e.Msg == "serving metrics" }).Metrics
	const name = "job_signal_webhook_certificate_expiration_timestamp_seconds"
	var shown, served int64
	for range 3 {
		conn, err := tls.Dial("tcp", w.addr, &tls.Config{InsecureSkipVerify: true}) // what it presents, not whether it is trusted
		if err != nil {
			t.Fatal(err)
		}
		served = conn.ConnectionState().PeerCertificates[0].NotAfter.Unix()
		conn.Close()
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Get("http://" + addr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		text, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
		resp.Body.Close()
		for line := range strings.Lines(string(text)) {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+" "); ok {
				f, _ := strconv.ParseFloat(v, 64)
				shown = int64(f)
			}
		}
		if shown == served {
			return
		}
	}
	t.Errorf("%s: %s is %d, the certificate it presents expires at %d", w.addr, name, shown, served)
}

// checkExpiryEvent: a Warning Event about the replica's Pod, in namespace,
// says its certificate is within 30 days of its expiry.
func checkExpiryEvent(t *testing.T, namespace, pod string) {
	t.Helper()
	events, err := kube.Client().CoreV1().Events(namespace).List(t.Context(),
		metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod + ",reason=" + webhook.ReasonCertificateExpiring})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.Type == corev1.EventTypeWarning && e.InvolvedObject.Kind == "Pod" && strings.Contains(e.Message, "expires at") {
			return
		}
	}
	t.Errorf("no Warning Event %s about Pod %s/%s: %v", webhook.ReasonCertificateExpiring, namespace, pod, events.Items)
}
