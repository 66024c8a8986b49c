//go:build e2e

// long because the stand-in injectors (the two styles, their server and
// registration) and the cases that need them are read together.

package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/job-signal/job-signal/inject"
)

// Stand-in injectors: mutating webhooks the test serves on 127.0.0.1 that
// add a proxy to a Pod as a service mesh's injector does, registered under
// the real injectors' configuration names, so that the API server orders
// them against job-signal's as it would in a cluster that runs them.

// injectorStyle is how a stand-in changes a Pod.
type injectorStyle string

const (
	// linkerdStyle: linkerd-init first among the init containers, and
	// linkerd-proxy as the first container (Linkerd injects its proxy
	// first, so that it starts before the application).
	linkerdStyle injectorStyle = "linkerd"
	// istioStyle: istio-init after the Pod's init containers, istio-proxy
	// as the last container, and each container's httpGet probes rewritten
	// to the proxy's status port, 15020, under /app-health/NAME/ (Istio's
	// probe rewrite, on by default).
	istioStyle injectorStyle = "istio"
)

// proxyName is the container a style adds.
func (s injectorStyle) proxyName() string {
	return map[injectorStyle]string{linkerdStyle: "linkerd-proxy", istioStyle: "istio-proxy"}[s]
}

// injectOps is the JSON Patch a stand-in of style s answers for pod: none
// when its proxy is there already.
func (s injectorStyle) injectOps(pod *corev1.Pod) []map[string]any {
	proxy := s.proxyName()
	if slices.ContainsFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == proxy }) {
		return nil
	}
	container := func(name, script string) corev1.Container {
		return corev1.Container{Name: name, Image: busyboxImage, ImagePullPolicy: kube.PullPolicy(), Command: []string{"sh", "-c", script}}
	}
	add := func(path string, v any) map[string]any { return map[string]any{"op": "add", "path": path, "value": v} }
	var ops []map[string]any
	initC := container(string(s)+"-init", "true")
	switch {
	case len(pod.Spec.InitContainers) == 0:
		ops = append(ops, add("/spec/initContainers", []corev1.Container{initC}))
	case s == linkerdStyle:
		ops = append(ops, add("/spec/initContainers/0", initC))
	default:
		ops = append(ops, add("/spec/initContainers/-", initC))
	}
	if s == linkerdStyle {
		ops = append(ops, add("/spec/containers/0", container(proxy, termSidecar)))
	} else {
		ops = append(ops, add("/spec/containers/-", container(proxy, termSidecar)))
		for i, c := range pod.Spec.Containers {
			for kind, probe := range map[string]*corev1.Probe{"readinessProbe": c.ReadinessProbe, "livenessProbe": c.LivenessProbe, "startupProbe": c.StartupProbe} {
				if probe != nil && probe.HTTPGet != nil {
					what := map[string]string{"readinessProbe": "readyz", "livenessProbe": "livez", "startupProbe": "startupz"}[kind]
					ops = append(ops, map[string]any{"op": "replace", "path": fmt.Sprintf("/spec/containers/%d/%s/httpGet", i, kind),
						"value": corev1.HTTPGetAction{Path: "/app-health/" + c.Name + "/" + what, Port: intstr.FromInt32(15020), Scheme: corev1.URISchemeHTTP}})
				}
			}
		}
	}
	key := "e2e.job-signal.dev~1stand-in-" + string(s)
	if pod.Annotations == nil {
		ops = append(ops, add("/metadata/annotations", map[string]string{"e2e.job-signal.dev/stand-in-" + string(s): "injected"}))
	} else {
		ops = append(ops, add("/metadata/annotations/"+key, "injected"))
	}
	return ops
}

// serveInjection answers an AdmissionReview for a Pod with style's patch.
func serveInjection(style injectorStyle) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<20)).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "want an AdmissionReview", http.StatusBadRequest)
			return
		}
		resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
		var pod corev1.Pod
		if err := json.Unmarshal(review.Request.Object.Raw, &pod); err == nil {
			if ops := style.injectOps(&pod); len(ops) > 0 {
				resp.Patch, _ = json.Marshal(ops)
				resp.PatchType = ptr.To(admissionv1.PatchTypeJSONPatch)
			}
		}
		review.Request, review.Response = nil, resp
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(review)
	}
}

// standIn is one stand-in injector: its configuration's name, its style,
// and the namespaces it serves.
type standIn struct {
	config     string
	style      injectorStyle
	namespaces []string
}

// startInjectors serves the stand-ins on 127.0.0.1 (one HTTPS server, a
// path per style) and registers each under its configuration name for its
// namespaces (reinvocationPolicy Never, as Istio and Linkerd ship), and
// returns once the API server calls each (a dry-run Pod comes back with
// its proxy).
func startInjectors(t *testing.T, injectors ...standIn) {
	t.Helper()
	requireLoopback(t, "the API server calls the stand-in injectors this test serves on 127.0.0.1")
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
	mux := http.NewServeMux()
	for _, s := range []injectorStyle{linkerdStyle, istioStyle} {
		mux.Handle("POST /"+string(s), serveInjection(s))
	}
	srv := &http.Server{Handler: mux, TLSConfig: &tls.Config{Certificates: []tls.Certificate{pair}}, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.ServeTLS(l, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("stand-in injectors: %v", err)
		}
	}()
	t.Cleanup(func() { srv.Close() })
	hooks := kube.Client().AdmissionregistrationV1().MutatingWebhookConfigurations()
	for _, in := range injectors {
		_, err := hooks.Create(t.Context(), &admissionregistrationv1.MutatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: in.config},
			Webhooks: []admissionregistrationv1.MutatingWebhook{{
				Name:         string(in.style) + ".stand-in.e2e.job-signal.dev",
				ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To("https://" + l.Addr().String() + "/" + string(in.style)), CABundle: kube.CAPEM()},
				Rules: []admissionregistrationv1.RuleWithOperations{{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
				}},
				NamespaceSelector:       &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{inNamespaces(in.namespaces)}},
				FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
				SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
				AdmissionReviewVersions: []string{"v1"},
				TimeoutSeconds:          ptr.To(int32(10)),
				ReinvocationPolicy:      ptr.To(admissionregistrationv1.NeverReinvocationPolicy),
			}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("register the stand-in %s: %v", in.config, err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := hooks.Delete(ctx, in.config, metav1.DeleteOptions{}); err != nil {
				t.Errorf("delete MutatingWebhookConfiguration %s: %v", in.config, err)
			}
		})
	}
	for _, in := range injectors {
		// A bare Pod of one container: neither job-signal's webhook nor its
		// policy takes it, only the stand-in.
		probe := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "injector-probe"},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{busyboxContainer("main")}}}
		deadline := time.Now().Add(30 * time.Second)
		for {
			got, err := kube.Client().CoreV1().Pods(in.namespaces[0]).Create(t.Context(), probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if err == nil && slices.ContainsFunc(got.Spec.Containers, func(c corev1.Container) bool { return c.Name == in.style.proxyName() }) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the API server does not call the stand-in %s 30 s after its registration (last probe: %v)", in.config, err)
			}
			time.Sleep(100 * time.Millisecond) // the API server's informer has no event for us: poll, bounded
		}
	}
}

// lateInjector is a stand-in's configuration name that sorts after
// job-signal's (an injector of a name no list foresaw): the API server
// calls job-signal first.
const lateInjector = "zzz-e2e-late-proxy-injector"

// TestOtherInjectors: job-signal's webhook, registered as the chart makes
// it (mode auto), and stand-ins of Linkerd's and Istio's injectors
// registered under their real configuration names, which sort before
// job-signal's: a Job of one container and one of two (Istio's with a
// probe it rewrites), and a Job the plugin injected beforehand (in the
// pair), each Complete with the proxy stopped, whatever the form. An
// injector whose name sorts after job-signal's: a two-container Job still
// completes (the API server calls job-signal again after the proxy is
// added: it was called in the first round); a one-container Job's Pod,
// which job-signal was never called for, is refused by the chart's
// policy, and the Job's events show its one-line message naming the
// proxy.
func TestOtherInjectors(t *testing.T) {
	t.Parallel()
	type jobCase struct {
		name      string
		style     injectorStyle
		late      bool // under lateInjector
		job       func(name string) *batchv1.Job
		refused   bool
		viaPlugin bool
	}
	oneContainer := func(name string) *batchv1.Job { return noSidecarJob(name) }
	twoContainers := func(name string) *batchv1.Job { return baselineJob(name, false) }
	probed := func(name string) *batchv1.Job {
		job := baselineJob(name, false)
		job.Spec.Template.Spec.Containers[0].ReadinessProbe = &corev1.Probe{
			ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8080)}}}
		return job
	}
	cases := []jobCase{
		{name: "linkerd-one", style: linkerdStyle, job: oneContainer},
		{name: "linkerd-two", style: linkerdStyle, job: twoContainers},
		{name: "linkerd-plugin", style: linkerdStyle, job: twoContainers, viaPlugin: true},
		{name: "istio-one", style: istioStyle, job: oneContainer},
		{name: "istio-two", style: istioStyle, job: probed},
		{name: "istio-plugin", style: istioStyle, job: twoContainers, viaPlugin: true},
		{name: "late-two", style: linkerdStyle, late: true, job: twoContainers},
		{name: "late-one", style: linkerdStyle, late: true, job: oneContainer, refused: true},
	}
	spaces := map[string]*space{}
	var all []string
	served := map[string][]string{}
	for _, c := range cases {
		s := newSpace(t, "company-"+c.name, map[string]string{inject.LabelInject: "enabled"})
		spaces[c.name] = s
		all = append(all, s.ns)
		config := map[injectorStyle]string{linkerdStyle: "linkerd-proxy-injector-webhook-config", istioStyle: "istio-sidecar-injector"}[c.style]
		if c.late {
			config = lateInjector
		}
		served[config] = append(served[config], s.ns)
	}
	hook := startWebhook(t, chartModeFlags(t, inject.ModeAuto)...)
	hook.waitEvent(t, time.Minute, func(e webhookEvent) bool { return e.Msg == "cluster checked" })
	registerWebhook(t, hook.addr, all...)
	var injectors []standIn
	for config, namespaces := range served {
		style := istioStyle
		if !strings.HasPrefix(config, "istio") {
			style = linkerdStyle
		}
		injectors = append(injectors, standIn{config: config, style: style, namespaces: namespaces})
	}
	startInjectors(t, injectors...)

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := spaces[c.name]
			job := c.job(c.name)
			if c.viaPlugin {
				job.TypeMeta = metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}
				job.Namespace = s.ns
				manifest, err := json.Marshal(job) // as kubectl get -o json writes it
				if err != nil {
					t.Fatal(err)
				}
				job, _ = plugin(t, s, manifest, "--offline")
				if !inject.Injected(job.Spec.Template.Annotations) {
					t.Fatalf("the plugin did not inject the Job: %v", job.Spec.Template.Annotations)
				}
			}
			created, _ := s.createJob(job)
			if c.refused {
				s.waitFailedCreates([]string{created.Name}, policyMessage, 2*time.Minute)
				for _, m := range s.failedCreates()[created.Name] {
					if strings.Contains(m, policyMessage) && (!strings.Contains(m, c.style.proxyName()) || strings.ContainsAny(m, "\r\n")) {
						t.Errorf("the policy's message, in the Job's events: %q; want one line naming %s", m, c.style.proxyName())
					}
				}
				return
			}
			done, _ := s.waitJob(created.Name, 3*time.Minute)
			expectJob(t, done, batchv1.JobComplete, batchv1.JobReasonCompletionsReached, 1, 0)
			pod := s.jobPods(done, 1)[0]
			expectPhase(t, pod, corev1.PodSucceeded)
			expectProxyStopped(t, pod, c.style.proxyName())
			if c.style == istioStyle && c.job(c.name).Spec.Template.Spec.Containers[0].ReadinessProbe != nil {
				main := pod.Spec.Containers[slices.IndexFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == "main" })]
				if p := main.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Port.IntValue() != 15020 {
					t.Errorf("main's readinessProbe %+v: want it rewritten to the proxy's port 15020 (the stand-in's)", p)
				}
			}
		})
	}
}

// expectProxyStopped: the proxy container ended, in containers (the pair)
// or in initContainers (a native sidecar), and no container is left
// running.
func expectProxyStopped(t *testing.T, pod *corev1.Pod, proxy string) {
	t.Helper()
	found := false
	for _, st := range slices.Concat(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses) {
		if st.State.Terminated == nil {
			t.Errorf("container %s of Pod %s did not end: %+v", st.Name, pod.Name, st.State)
		}
		found = found || st.Name == proxy
	}
	if !found {
		t.Errorf("Pod %s has no %s: %s", pod.Name, proxy, podSummary(pod))
	}
}
