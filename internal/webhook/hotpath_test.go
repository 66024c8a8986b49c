package webhook_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/job-signal/job-signal/internal/testing/webhooktest"
	"github.com/job-signal/job-signal/internal/webhook"
)

// apiServerPod is a Job's Pod with a sidecar as the API server sends it
// on the first call: defaults filled in, the ServiceAccount's token
// mounted into every container, tolerations added.
func apiServerPod() *corev1.Pod {
	token := corev1.VolumeMount{Name: "kube-api-access-x1y2z", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}
	defaulted := func(c corev1.Container) corev1.Container {
		c.VolumeMounts = []corev1.VolumeMount{token}
		c.TerminationMessagePath, c.TerminationMessagePolicy = "/dev/termination-log", corev1.TerminationMessageReadFile
		c.ImagePullPolicy = corev1.PullIfNotPresent
		return c
	}
	p := jobPod(defaulted(container("main", "sh", "-c", "echo main working; sleep 2; echo main done")),
		defaulted(container("sidecar", "sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait")))
	p.Annotations = nil
	p.Labels = map[string]string{"batch.kubernetes.io/controller-uid": "0b6f1c9e-3d1a-4c55-9a57-3c4bd9b7c2a1",
		"batch.kubernetes.io/job-name": "export", "controller-uid": "0b6f1c9e-3d1a-4c55-9a57-3c4bd9b7c2a1", "job-name": "export"}
	p.OwnerReferences[0].Controller, p.OwnerReferences[0].BlockOwnerDeletion = ptr.To(true), ptr.To(true)
	p.Spec.Volumes = []corev1.Volume{{Name: token.Name, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		DefaultMode: ptr.To(int32(420)), Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To(int64(3607))}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
		}}}}}
	p.Spec.DNSPolicy, p.Spec.SchedulerName, p.Spec.ServiceAccountName = corev1.DNSClusterFirst, "default-scheduler", "default"
	p.Spec.TerminationGracePeriodSeconds, p.Spec.EnableServiceLinks = ptr.To(int64(10)), ptr.To(true)
	p.Spec.SecurityContext, p.Spec.Priority, p.Spec.PreemptionPolicy = &corev1.PodSecurityContext{}, ptr.To(int32(0)), ptr.To(corev1.PreemptLowerPriority)
	for _, key := range []string{"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"} {
		p.Spec.Tolerations = append(p.Spec.Tolerations, corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists,
			Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To(int64(300))})
	}
	_ = resource.MustParse // defaults carry no resources here
	return p
}

// reviews are the two AdmissionReviews the API server sends for one
// such Pod: the first call, and the call again after the ServiceAccount
// admission mounted its token into the install container.
func reviews(b *testing.B) (first, again []byte) {
	s := webhooktest.Start(b, &webhook.Config{})
	pod := apiServerPod()
	after, _ := s.Review(b, pod)
	install := &after.Spec.InitContainers[0]
	install.VolumeMounts = append(install.VolumeMounts, pod.Spec.Containers[0].VolumeMounts[0])
	install.TerminationMessagePath, install.TerminationMessagePolicy = "/dev/termination-log", corev1.TerminationMessageReadFile
	return webhooktest.ReviewOf(b, pod), webhooktest.ReviewOf(b, after)
}

// BenchmarkServeMutate is the webhook's handling of both calls for one
// Pod, without the network: where its CPU goes per injected Pod.
func BenchmarkServeMutate(b *testing.B) {
	first, again := reviews(b)
	cfg := &webhook.Config{Log: slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))}
	h := cfg.Handler()
	serve := func(body []byte) {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/mutate", bytes.NewReader(body)))
		if w.Code != http.StatusOK || !json.Valid(w.Body.Bytes()) {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
	for _, calls := range []struct {
		name   string
		bodies [][]byte
	}{{"both", [][]byte{first, again}}, {"first", [][]byte{first}}, {"again", [][]byte{again}}} {
		b.Run(calls.name, func(b *testing.B) {
			b.ReportAllocs()
			start := cpuTime(b)
			for b.Loop() {
				for _, body := range calls.bodies {
					serve(body)
				}
			}
			b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the process's CPU time so far, user and system: on a
// machine shared with other work, what a benchmark's wall time is not.
func cpuTime(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
