package webhook_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/testing/hostileregistry"
	"github.com/job-signal/job-signal/internal/testing/webhooktest"
	"github.com/job-signal/job-signal/internal/webhook"
)

// holdOneRequest keeps one request in flight at s, held by reg until the
// returned func is called; it returns once the request is held.
func holdOneRequest(t *testing.T, s *webhooktest.Server, reg *hostileregistry.Registry) (release func()) {
	t.Helper()
	arrived, held := make(chan struct{}, 1), make(chan struct{})
	reg.Script(func(r *http.Request) hostileregistry.Response {
		select {
		case arrived <- struct{}{}:
		default:
		}
		<-held
		return hostileregistry.Response{Status: http.StatusServiceUnavailable}
	})
	var wg sync.WaitGroup
	wg.Go(func() { s.Answer(t, lookupPod(reg.ScriptedImage())) })
	var once sync.Once
	release = func() {
		once.Do(func() { close(held) })
		wg.Wait()
	}
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		release()
		t.Fatal("the first request did not reach the registry")
	}
	return release
}

// TestBusyDeniesOnlyJobPods: beyond its bound on requests in flight the
// webhook denies for now only a Pod it has read enough of to know it
// serves and that may need job-signal (a Job's Pod, or one labelled
// enabled, of more than one container); every other Pod is admitted
// unchanged, however large its metadata.
func TestBusyDeniesOnlyJobPods(t *testing.T) {
	reg := hostileregistry.Start(t)
	s := webhooktest.Start(t, &webhook.Config{MaxInFlight: 1, RegistryTimeout: 5 * time.Second})
	defer holdOneRequest(t, s, reg)()

	two := func() *corev1.Pod { return jobPod(container("job", "/job"), container("proxy", "/proxy")) }
	owned := func(kind, apiVersion string) *corev1.Pod {
		p := two()
		p.OwnerReferences[0].Kind, p.OwnerReferences[0].APIVersion = kind, apiVersion
		p.Spec.RestartPolicy = corev1.RestartPolicyAlways
		return p
	}
	bare := func(label string) *corev1.Pod {
		p := two()
		p.OwnerReferences = nil
		if label != "" {
			p.Labels = map[string]string{inject.LabelInject: label}
		}
		return p
	}
	big := func(p *corev1.Pod) *corev1.Pod {
		p.Annotations = map[string]string{"example.com/big": strings.Repeat("x", 200<<10)}
		return p
	}
	for _, tc := range []struct {
		name   string
		pod    *corev1.Pod
		denied bool
	}{
		{"Job Pod with a sidecar", two(), true},
		{"Job Pod with a sidecar, 200 KiB of annotations", big(two()), true},
		{"labelled enabled, with a sidecar", bare("enabled"), true},
		{"ReplicaSet Pod", owned("ReplicaSet", "apps/v1"), false},
		{"ReplicaSet Pod, 200 KiB of annotations", big(owned("ReplicaSet", "apps/v1")), false},
		{"StatefulSet Pod", owned("StatefulSet", "apps/v1"), false},
		{"DaemonSet Pod", owned("DaemonSet", "apps/v1"), false},
		{"another group's Job", owned("Job", "example.com/v1"), false},
		{"bare Pod", bare(""), false},
		{"Job Pod labelled disabled", func() *corev1.Pod { p := two(); p.Labels = map[string]string{inject.LabelInject: "disabled"}; return p }(), false},
		{"Job Pod of one container", jobPod(container("job", "/job")), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := s.Answer(t, tc.pod)
			checkReasons(t, resp, nil)
			if tc.denied {
				if resp.Allowed || resp.Result == nil || resp.Result.Code != http.StatusTooManyRequests {
					t.Errorf("want denied for now (429): allowed %v, %+v", resp.Allowed, resp.Result)
				}
				return
			}
			if !resp.Allowed || resp.Patch != nil {
				t.Errorf("want admitted unchanged: allowed %v, patch %s, %+v", resp.Allowed, resp.Patch, resp.Result)
			}
		})
	}
}
