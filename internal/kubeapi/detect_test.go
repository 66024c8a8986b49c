package kubeapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/job-signal/job-signal/inject"
)

// TestKeptNativeSidecar: native sidecars iff the answer's init container
// still has restartPolicy Always; the API server drops the field where
// the feature is off. The container is found by name: another webhook may
// add init containers before it.
func TestKeptNativeSidecar(t *testing.T) {
	always := ptr.To(corev1.ContainerRestartPolicyAlways)
	for _, tc := range []struct {
		name    string
		init    []corev1.Container
		want    bool
		wantErr bool
	}{
		{"kept", []corev1.Container{{Name: DetectContainer, RestartPolicy: always}}, true, false},
		{"dropped", []corev1.Container{{Name: DetectContainer}}, false, false},
		{"kept, after another webhook's", []corev1.Container{{Name: "istio-init"}, {Name: DetectContainer, RestartPolicy: always}}, true, false},
		{"only another's kept", []corev1.Container{{Name: "mesh", RestartPolicy: always}, {Name: DetectContainer}}, false, false},
		{"gone", nil, false, true},
	} {
		got, err := keptNativeSidecar(&corev1.Pod{Spec: corev1.PodSpec{InitContainers: tc.init}})
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("%s: %v, %v; want %v, error %v", tc.name, got, err, tc.want, tc.wantErr)
		}
	}
}

// TestDetectPodNotForJobSignal: the dry-run Pod is none the webhook is
// sent or injects: labelled disabled, no owner, one container.
func TestDetectPodNotForJobSignal(t *testing.T) {
	p := DetectPod("job-signal-system")
	if p.Labels[inject.LabelInject] != "disabled" || len(p.OwnerReferences) != 0 || len(p.Spec.Containers) != 1 {
		t.Errorf("the dry-run Pod could reach job-signal's webhook: labels %v, owners %v, %d containers", p.Labels, p.OwnerReferences, len(p.Spec.Containers))
	}
	if p.Namespace != "job-signal-system" || len(p.Spec.InitContainers) != 1 || p.Spec.InitContainers[0].Name != DetectContainer {
		t.Errorf("want one init container %s in namespace job-signal-system: %+v", DetectContainer, p)
	}
}

// TestDetectAnswers: Detect against small servers on 127.0.0.1 that answer
// as an API server with or without native sidecars, refuse, hang or send
// too much: each ends within its bound with the fact or an error that
// says what to do.
func TestDetectAnswers(t *testing.T) {
	const versionJSON = `{"major":"1","minor":"37","gitVersion":"v1.37.2"}`
	podAnswer := func(kept bool) string {
		rp := ""
		if kept {
			rp = `,"restartPolicy":"Always"`
		}
		return `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"job-signal-detect-x"},"spec":{"initContainers":[{"name":"` +
			DetectContainer + `","image":"x"` + rp + `}],"containers":[{"name":"main","image":"x"}]}}`
	}
	for _, tc := range []struct {
		name    string
		handle  func(w http.ResponseWriter, r *http.Request)
		want    inject.Cluster
		wantErr string
	}{
		{"native sidecars", serve(versionJSON, podAnswer(true), http.StatusCreated), inject.Cluster{Known: true, NativeSidecars: true, Version: "v1.37.2"}, ""},
		{"field dropped", serve(versionJSON, podAnswer(false), http.StatusCreated), inject.Cluster{Known: true, Version: "v1.37.2"}, ""},
		{"forbidden", serve(versionJSON, `{"apiVersion":"v1","kind":"Status","status":"Failure","reason":"Forbidden","code":403,"message":"pods is forbidden"}`, http.StatusForbidden),
			inject.Cluster{}, "needs create on pods in ns"},
		{"version too large", serve(`{"gitVersion":"`+strings.Repeat("x", 2<<20)+`"}`, podAnswer(true), http.StatusCreated), inject.Cluster{}, "more than"},
		{"hangs", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, inject.Cluster{}, "version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(tc.handle))
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			start := time.Now()
			got, err := Detect(ctx, &rest.Config{Host: srv.URL}, "ns")
			if elapsed := time.Since(start); elapsed > DetectTimeout {
				t.Errorf("took %s", elapsed)
			}
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("%+v, want %+v", got, tc.want)
			}
			if tc.name == "hangs" && !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("want the deadline in the error: %v", err)
			}
		})
	}
}

// serve answers /version with version and a Pod creation with pod and
// code, checking that the creation is a dry run.
func serve(version, pod string, code int) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/version":
			w.Write([]byte(version))
		case r.Method == http.MethodPost && r.URL.Path == "/api/v1/namespaces/ns/pods" && r.URL.Query().Get("dryRun") == "All":
			w.WriteHeader(code)
			w.Write([]byte(pod))
		default:
			http.Error(w, "not a dry run", http.StatusBadRequest)
		}
	}
}

// TestDetectNeedsNamespace: no namespace is a clear error, not a request.
func TestDetectNeedsNamespace(t *testing.T) {
	if _, err := Detect(context.Background(), &rest.Config{Host: "http://127.0.0.1:1"}, ""); err == nil || !strings.Contains(err.Error(), "namespace") {
		t.Errorf("%v", err)
	}
}
