package webhook_test

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/testing/hostileregistry"
	"github.com/job-signal/job-signal/internal/testing/webhooktest"
	"github.com/job-signal/job-signal/internal/webhook"
)

// lookupPod is a Job's Pod whose main container's command comes from
// image (so the webhook must look it up), with a sidecar: without
// job-signal it would never end.
func lookupPod(image string) *corev1.Pod {
	return jobPod(corev1.Container{Name: "job", Image: image, Args: []string{"--once"}}, container("proxy", "/proxy"))
}

// checkReasons fails the test where a reason the webhook wrote into the
// answer or the Pod is not one short line.
func checkReasons(t *testing.T, resp *admissionv1.AdmissionResponse, pod *corev1.Pod) {
	t.Helper()
	texts := append([]string{}, resp.Warnings...)
	if resp.Result != nil {
		texts = append(texts, resp.Result.Message)
	}
	if pod != nil {
		texts = append(texts, pod.Annotations[inject.AnnotationSkipped])
	}
	for _, s := range texts {
		if len(s) > 1024 || strings.ContainsAny(s, "\n\r\t") || !utf8.ValidString(s) {
			t.Errorf("a reason of %d bytes, or not one line: %.200q", len(s), s)
		}
	}
}

// TestOutagePolicy: a Pod that needs job-signal is not admitted without
// it because the registry is down or slow: it is denied, with a short
// reason, for the Job controller to create it again. With the policy
// Ignore it is admitted without job-signal, the reason recorded. A Pod of
// one container is never held up.
func TestOutagePolicy(t *testing.T) {
	reg := hostileregistry.Start(t)
	const timeout = 500 * time.Millisecond
	slow := reg.Image(hostileregistry.SlowDrip)
	down := reg.Image(hostileregistry.Unavailable)
	fail := webhooktest.Start(t, &webhook.Config{RegistryTimeout: timeout})
	ignore := webhooktest.Start(t, &webhook.Config{RegistryTimeout: timeout, FailurePolicy: webhook.PolicyIgnore})
	for _, image := range []string{slow, down} {
		resp := fail.Answer(t, lookupPod(image))
		if resp.Allowed || resp.Result == nil || resp.Result.Code != 503 || !strings.Contains(resp.Result.Message, "the Job controller tries again") {
			t.Errorf("%s, policy Fail: allowed %v, result %+v", image, resp.Allowed, resp.Result)
		}
		checkReasons(t, resp, nil)
		after, resp := ignore.Review(t, lookupPod(image))
		if why := after.Annotations[inject.AnnotationSkipped]; why == "" || len(after.Spec.InitContainers) > 0 {
			t.Errorf("%s, policy Ignore: skipped %q, init containers %d", image, why, len(after.Spec.InitContainers))
		}
		checkReasons(t, resp, after)
		one := jobPod(corev1.Container{Name: "job", Image: image, Args: []string{"--once"}})
		if _, resp = fail.Review(t, one); resp.Patch != nil || len(resp.Warnings) > 0 {
			t.Errorf("%s, one container (it ends by itself): patch %s, warnings %q", image, resp.Patch, resp.Warnings)
		}
	}
	if resp := fail.Answer(t, lookupPod(slow)); resp.Allowed || !strings.Contains(resp.Result.Message, "did not answer within 500ms") {
		t.Errorf("a slow registry: %+v", resp.Result)
	}
}

// TestHostileRegistryAnswers: whatever trick the registry plays, the
// answer comes within the request's bound, every reason is one short
// line, the patch applies, and the Pod is denied only when the trick may
// pass (the registry unavailable or slow).
func TestHostileRegistryAnswers(t *testing.T) {
	reg := hostileregistry.Start(t)
	s := webhooktest.Start(t, &webhook.Config{RegistryTimeout: 2 * time.Second})
	transient := map[hostileregistry.Trick]bool{hostileregistry.Unavailable: true, hostileregistry.SlowDrip: true}
	for _, trick := range hostileregistry.Tricks {
		t.Run(string(trick), func(t *testing.T) {
			start := time.Now()
			resp := s.Answer(t, lookupPod(reg.Image(trick)))
			if took := time.Since(start); took > webhook.RequestTimeout {
				t.Errorf("answered after %s", took)
			}
			checkReasons(t, resp, nil)
			if resp.Allowed == transient[trick] {
				t.Fatalf("allowed %v, result %+v, warnings %q", resp.Allowed, resp.Result, resp.Warnings)
			}
			if resp.Allowed {
				after, _ := s.Review(t, lookupPod(reg.Image(trick)))
				checkReasons(t, resp, after)
				if after.Annotations[inject.AnnotationSkipped] == "" || len(after.Spec.InitContainers) > 0 {
					t.Errorf("want admitted without job-signal, with the reason: %v", after.Annotations)
				}
			}
		})
	}
}

// TestRecordFits: the record never gets a Pod refused for the size of its
// annotations (256 KiB in all): a Pod it would push over is admitted
// without job-signal, and the reason is recorded only where it fits too.
func TestRecordFits(t *testing.T) {
	s := webhooktest.Start(t, &webhook.Config{})
	for _, tc := range []struct {
		room      int // bytes left under the limit
		injected  bool
		annotated bool
	}{
		{4096, true, false},
		{200, false, true},
		{40, false, false},
	} {
		pod := jobPod(container("job", "/job"), container("proxy", "/proxy"))
		const key = "example.com/big"
		pod.Annotations = map[string]string{key: strings.Repeat("x", 256<<10-len(key)-tc.room)}
		after, resp := s.Review(t, pod)
		total := 0
		for k, v := range after.Annotations {
			total += len(k) + len(v)
		}
		if total > 256<<10 {
			t.Errorf("room %d: the answer makes the annotations %d bytes: the API server would refuse the Pod", tc.room, total)
		}
		if inject.Injected(after.Annotations) != tc.injected || (after.Annotations[inject.AnnotationSkipped] != "") != tc.annotated {
			t.Errorf("room %d: injected %v, skipped %q, warnings %q", tc.room, inject.Injected(after.Annotations), after.Annotations[inject.AnnotationSkipped], resp.Warnings)
		}
		checkReasons(t, resp, after)
	}
}

// TestHandWiredPod: a Pod with job-signal added by hand is left as it is,
// and not reported as admitted without job-signal.
func TestHandWiredPod(t *testing.T) {
	s := webhooktest.Start(t, &webhook.Config{})
	injected, _ := s.Review(t, jobPod(container("job", "/job"), container("proxy", "/proxy")))
	delete(injected.Annotations, inject.AnnotationInjected)
	after, resp := s.Review(t, injected)
	if resp.Patch != nil || len(resp.Warnings) > 0 || after.Annotations[inject.AnnotationSkipped] != "" {
		t.Errorf("a hand-wired Pod: patch %s, warnings %q", resp.Patch, resp.Warnings)
	}
}

// TestLimitRangeReview: in a namespace whose LimitRange sets a minimum
// above the install container's resources, the Pod is injected with the
// install container moved into the range; where the range leaves no room,
// it is admitted without job-signal, saying which LimitRange; where the
// LimitRanges cannot be read, it is denied for now.
func TestLimitRangeReview(t *testing.T) {
	ranges := map[string][]corev1.LimitRange{
		"roomy": {{ObjectMeta: metav1.ObjectMeta{Name: "min"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
			Type: corev1.LimitTypeContainer, Min: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")}}}}}},
		"tight": {{ObjectMeta: metav1.ObjectMeta{Name: "tiny"}, Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{
			Type: corev1.LimitTypeContainer, Max: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("8Mi")}}}}}},
	}
	s := webhooktest.Start(t, &webhook.Config{LimitRanges: func(namespace string) ([]corev1.LimitRange, error) {
		if namespace == "down" {
			return nil, errors.New("the API server is away")
		}
		return ranges[namespace], nil
	}})
	pod := func(namespace string) *corev1.Pod {
		p := jobPod(container("job", "/job"), container("proxy", "/proxy"))
		p.Namespace = namespace
		return p
	}
	after, _ := s.Review(t, pod("roomy"))
	if cpu := after.Spec.InitContainers[0].Resources.Requests[corev1.ResourceCPU]; cpu.String() != "200m" {
		t.Errorf("roomy: install container requests cpu %s", cpu.String())
	}
	after, _ = s.Review(t, pod("tight"))
	if why := after.Annotations[inject.AnnotationSkipped]; len(after.Spec.InitContainers) > 0 || !strings.Contains(why, "LimitRange") {
		t.Errorf("tight: skipped %q", why)
	}
	if resp := s.Answer(t, pod("down")); resp.Allowed {
		t.Errorf("LimitRanges unreadable: allowed, %q", resp.Warnings)
	}
}
