package inject

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/job-signal/job-signal/internal/version"
)

func list(pairs ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(pairs); i += 2 {
		l[corev1.ResourceName(pairs[i])] = resource.MustParse(pairs[i+1])
	}
	return l
}

func limitRange(items ...corev1.LimitRangeItem) []corev1.LimitRange {
	return []corev1.LimitRange{{ObjectMeta: metav1.ObjectMeta{Name: "limits"}, Spec: corev1.LimitRangeSpec{Limits: items}}}
}

// TestFitLimitRanges: the install init container is given what the
// LimitRange plugin would have given it and moved inside the ranges, in
// the ops both front ends write; a
// Pod the ranges would still refuse because of job-signal is an error
// naming the LimitRange, one they refused anyway is not blamed on it.
func TestFitLimitRanges(t *testing.T) {
	container := corev1.LimitTypeContainer
	for _, tc := range []struct {
		name       string
		ranges     []corev1.LimitRange
		containers corev1.ResourceRequirements // of the Pod's own containers
		requests   corev1.ResourceList         // the install container's, after
		limits     corev1.ResourceList
		err        string
	}{
		{name: "no LimitRange", requests: list("cpu", "10m", "memory", "16Mi"), limits: list("cpu", "100m", "memory", "32Mi")},
		{name: "min above the install container's requests and limits",
			ranges:   limitRange(corev1.LimitRangeItem{Type: container, Min: list("cpu", "200m", "memory", "64Mi")}),
			requests: list("cpu", "200m", "memory", "64Mi"), limits: list("cpu", "200m", "memory", "64Mi")},
		{name: "maxLimitRequestRatio",
			ranges:   limitRange(corev1.LimitRangeItem{Type: container, MaxLimitRequestRatio: list("cpu", "4", "memory", "1")}),
			requests: list("cpu", "25m", "memory", "32Mi"), limits: list("cpu", "100m", "memory", "32Mi")},
		{name: "ratio that does not divide evenly",
			ranges:   limitRange(corev1.LimitRangeItem{Type: container, MaxLimitRequestRatio: list("cpu", "3", "memory", "1.5")}),
			requests: list("cpu", "34m", "memory", "22369622"), limits: list("cpu", "100m", "memory", "32Mi")},
		{name: "max below the install container's cpu limit",
			ranges:   limitRange(corev1.LimitRangeItem{Type: container, Max: list("cpu", "50m", "memory", "1Gi")}),
			requests: list("cpu", "10m", "memory", "16Mi"), limits: list("cpu", "50m", "memory", "32Mi")},
		{name: "defaults for what it does not set, within max",
			ranges: limitRange(corev1.LimitRangeItem{Type: container, Max: list("ephemeral-storage", "1Gi"),
				Default: list("ephemeral-storage", "512Mi"), DefaultRequest: list("ephemeral-storage", "100Mi")}),
			containers: corev1.ResourceRequirements{Requests: list("ephemeral-storage", "100Mi"), Limits: list("ephemeral-storage", "512Mi")},
			requests:   list("cpu", "10m", "memory", "16Mi", "ephemeral-storage", "100Mi"),
			limits:     list("cpu", "100m", "memory", "32Mi", "ephemeral-storage", "512Mi")},
		{name: "max without a default: the limit becomes the max",
			ranges:     limitRange(corev1.LimitRangeItem{Type: container, Max: list("ephemeral-storage", "1Gi")}),
			containers: corev1.ResourceRequirements{Limits: list("ephemeral-storage", "1Gi")},
			requests:   list("cpu", "10m", "memory", "16Mi"), limits: list("cpu", "100m", "memory", "32Mi", "ephemeral-storage", "1Gi")},
		{name: "max memory below what the install container needs",
			ranges: limitRange(corev1.LimitRangeItem{Type: container, Max: list("memory", "8Mi")}),
			err:    "at most 8Mi, less than the 16Mi the job-signal-install init container needs"},
		{name: "a Pod maximum the install container's limit exceeds",
			ranges:     limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypePod, Max: list("cpu", "60m")}),
			containers: corev1.ResourceRequirements{Limits: list("cpu", "20m")},
			err:        "LimitRange limits, the Pod: maximum cpu usage per Pod is 60m, but limit is 100m"},
		{name: "the Pod's own containers below a min: not job-signal's doing",
			ranges:     limitRange(corev1.LimitRangeItem{Type: container, Min: list("cpu", "20m")}),
			containers: corev1.ResourceRequirements{Requests: list("cpu", "5m")},
			requests:   list("cpu", "20m", "memory", "16Mi"), limits: list("cpu", "100m", "memory", "32Mi")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := &corev1.Pod{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{
				{Name: "job", Image: "busybox", Command: []string{"/job"}, Resources: tc.containers},
				{Name: "proxy", Image: "busybox", Command: []string{"/proxy"}, Resources: tc.containers},
			}}}
			raw, _ := json.Marshal(before)
			// As the front ends do it: fitted, written into the ops, applied.
			ops, err := FitLimitRanges(raw, before, opsOf(t, raw), tc.ranges)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			patched, err := Apply(raw, ops)
			if err != nil {
				t.Fatal(err)
			}
			after := &corev1.Pod{}
			if err := json.Unmarshal(patched, after); err != nil {
				t.Fatal(err)
			}
			got := after.Spec.InitContainers[0].Resources
			if !equalLists(got.Requests, tc.requests) || !equalLists(got.Limits, tc.limits) {
				t.Errorf("install container: requests %v limits %v, want %v %v", got.Requests, got.Limits, tc.requests, tc.limits)
			}
			for _, v := range limitRangeViolations(after, tc.ranges) {
				if strings.Contains(v, InitContainer) {
					t.Errorf("still violated: %s", v)
				}
			}
		})
	}
}

func equalLists(a, b corev1.ResourceList) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || v.Cmp(w) != 0 {
			return false
		}
	}
	return true
}

// TestLimitRangeViolations restates the LimitRange plugin's rules, each
// with a case on each side.
func TestLimitRangeViolations(t *testing.T) {
	c := func(req, lim corev1.ResourceList) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: req, Limits: lim}}}}}
	}
	item := func(min, max, ratio corev1.ResourceList) []corev1.LimitRange {
		return limitRange(corev1.LimitRangeItem{Type: corev1.LimitTypeContainer, Min: min, Max: max, MaxLimitRequestRatio: ratio})
	}
	for _, tc := range []struct {
		name   string
		pod    *corev1.Pod
		ranges []corev1.LimitRange
		want   string // "" none
	}{
		{"min met", c(list("cpu", "1"), nil), item(list("cpu", "1"), nil, nil), ""},
		{"min, no request", c(nil, nil), item(list("cpu", "1"), nil, nil), "no request is specified"},
		{"min, request below", c(list("cpu", "999m"), nil), item(list("cpu", "1"), nil, nil), "but request is 999m"},
		{"min, limit below", c(list("cpu", "1"), list("cpu", "500m")), item(list("cpu", "1"), nil, nil), "but limit is 500m"},
		{"max met", c(nil, list("memory", "1Gi")), item(nil, list("memory", "1Gi"), nil), ""},
		{"max, no limit", c(nil, nil), item(nil, list("memory", "1Gi"), nil), "no limit is specified"},
		{"max, limit above", c(nil, list("memory", "2Gi")), item(nil, list("memory", "1Gi"), nil), "but limit is 2Gi"},
		{"max, request above", c(list("memory", "2Gi"), list("memory", "1Gi")), item(nil, list("memory", "1Gi"), nil), "but request is 2Gi"},
		{"ratio met", c(list("cpu", "100m"), list("cpu", "200m")), item(nil, nil, list("cpu", "2")), ""},
		{"ratio exceeded", c(list("cpu", "100m"), list("cpu", "201m")), item(nil, nil, list("cpu", "2")), "provided ratio is 2.010000"},
		{"ratio, no request", c(nil, list("cpu", "1")), item(nil, nil, list("cpu", "2")), "no request is specified or request is 0"},
		{"ratio, no limit", c(list("cpu", "1"), nil), item(nil, nil, list("cpu", "2")), "no limit is specified or limit is 0"},
	} {
		got := strings.Join(limitRangeViolations(tc.pod, tc.ranges), "; ")
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// opsOf is inject's ops for the Pod raw, every command given (no
// lookup), as the front ends plan them before their own checks.
func opsOf(t *testing.T, raw []byte) []Op {
	t.Helper()
	plan, err := Prepare(raw)
	if err != nil {
		t.Fatal(err)
	}
	res, err := plan.Inject(nil, version.Image)
	if err != nil {
		t.Fatal(err)
	}
	return res.Ops
}
