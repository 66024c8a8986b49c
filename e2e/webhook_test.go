//go:build e2e

package e2e

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestMutatingWebhookReachable proves the path the webhook takes on
// this cluster: a mutating webhook served by the test on 127.0.0.1 with a
// certificate from the cluster's CA, registered by URL with that CA as its
// caBundle, is called by the API server for Pods of one namespace, and its
// JSON patch lands in the stored Pod.
func TestMutatingWebhookReachable(t *testing.T) {
	t.Parallel()
	requireLoopback(t, "the API server calls the webhook this test serves on 127.0.0.1")
	s := newSpace(t, "webhook")
	certPEM, keyPEM, err := kube.IssueServingCert("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{
		Handler:           http.HandlerFunc(addLabel),
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{pair}},
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() {
		if err := srv.ServeTLS(l, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("webhook server: %v", err)
		}
	}()
	t.Cleanup(func() { srv.Close() })

	name := s.ns + "-label"
	hooks := kube.Client().AdmissionregistrationV1().MutatingWebhookConfigurations()
	_, err = hooks.Create(s.ctx, &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name: "label.e2e.job-signal.dev",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{
				URL: ptr.To("https://" + l.Addr().String() + "/mutate"), CABundle: kube.CAPEM()},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"},
					Resources: []string{"pods"}},
			}},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": s.ns}},
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail), // unreachable: the create fails
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To(int32(10)),
		}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hooks.Delete(s.ctx, name, metav1.DeleteOptions{}) })

	pod, err := kube.Client().CoreV1().Pods(s.ns).Create(s.ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "mutated"},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{
			Name: "main", Image: busyboxImage, ImagePullPolicy: corev1.PullNever, Command: []string{"true"}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create Pod through the webhook: %v", err)
	}
	if got := pod.Labels["e2e.job-signal.dev/webhook"]; got != "called" {
		t.Fatalf("the stored Pod's labels are %v: the webhook's patch is missing", pod.Labels)
	}
}

// addLabel answers an AdmissionReview with a JSON patch adding a label.
func addLabel(w http.ResponseWriter, r *http.Request) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, "want an AdmissionReview", http.StatusBadRequest)
		return
	}
	patch := `[{"op":"add","path":"/metadata/labels","value":{"e2e.job-signal.dev/webhook":"called"}}]`
	review.Response = &admissionv1.AdmissionResponse{
		UID: review.Request.UID, Allowed: true,
		Patch: []byte(patch), PatchType: ptr.To(admissionv1.PatchTypeJSONPatch),
	}
	review.Request = nil
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(review)
}
