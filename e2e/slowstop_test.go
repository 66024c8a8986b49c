//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/job-signal/job-signal/inject"
)

// deafSidecar ignores SIGTERM, as a shell loop, `tail -f` or a program
// without a handler does as PID 1: only SIGKILL ends it. trap ” keeps
// it so under sidecar-watch too (an ignored signal stays ignored in the
// sleeps it starts).
const deafSidecar = `trap '' TERM; echo sidecar up; while true; do sleep 1; done`

// slowStopGrace is the Pods' terminationGracePeriodSeconds: Kubernetes'
// default, longer than the pair's grace for a sidecar (10 s).
const slowStopGrace = 30

// slowStopVariants are the Jobs TestSlowStopSidecar runs side by side,
// one Pod each, with the same main and a sidecar that ignores SIGTERM.
var slowStopVariants = [...]struct {
	name    string
	webhook bool // created where the webhook in mode auto serves
	job     func(name string) *batchv1.Job
	codes   map[string]int32 // how its containers end
}{
	{"pair", false, func(name string) *batchv1.Job {
		w := wrapped{name: name, grace: slowStopGrace, main: []string{"sh", "-c", timingMain},
			sidecars: []sidecar{{name: "sidecar", command: []string{"sh", "-c", deafSidecar}}}}
		return w.job()
	}, nil},
	{"auto", true, func(name string) *batchv1.Job { return deafJob(name, false) }, nil},
	{"native", false, func(name string) *batchv1.Job { return deafJob(name, true) }, map[string]int32{"sidecar": 137}},
}

// deafJob is baselineJob with deafSidecar and slowStopGrace.
func deafJob(name string, native bool) *batchv1.Job {
	job := withMain(baselineJob(name, native), timingMain)
	spec := &job.Spec.Template.Spec
	spec.TerminationGracePeriodSeconds = ptr.To(int64(slowStopGrace))
	for _, list := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for i := range list {
			if list[i].Name == "sidecar" {
				list[i].Command = []string{"sh", "-c", deafSidecar}
			}
		}
	}
	return job
}

// TestSlowStopSidecar: a sidecar that ignores SIGTERM, in Pods with the
// default grace period, with the pair (sidecar-watch kills it after its
// grace, 10 s), as the webhook in mode auto injects it (the pair, saying
// why: native sidecars could end the Job later), and as a native sidecar
// (the kubelet waits the Pod's grace period before SIGKILL), in turns. It
// logs main's exit to the Job's Complete for each and one E2E_TIMING
// slowstop line, which make bench reads
// (E2E_TIMING_ROUNDS rounds, 1 by default). Where the cluster has no
// native sidecars the native variant is left out (native=absent).
func TestSlowStopSidecar(t *testing.T) {
	requireNodeProcesses(t, "main's exit time is the runtime's, read through the CRI on the node")
	t.Parallel()
	rounds := 1
	if n, err := strconv.Atoi(os.Getenv("E2E_TIMING_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	s := newSpace(t, "slow-stop")
	served := newSpace(t, "slow-stop-auto", map[string]string{inject.LabelInject: "enabled"})
	hook := startWebhook(t, chartModeFlags(t, inject.ModeAuto)...)
	registerWebhook(t, hook.addr, served.ns)
	waitAutoDetected(t, hook)
	var exit [len(slowStopVariants)][]int64
	for i := 1; i <= rounds; i++ {
		for v, variant := range slowStopVariants {
			if variant.name == "native" && !kube.NativeSidecars() {
				continue
			}
			in := s
			if variant.webhook {
				in = served
			}
			name := fmt.Sprintf("%s-%d", variant.name, i)
			d := in.timeJobEnding(variant.job(name), "slowstop-"+variant.name, variant.codes)
			exit[v] = append(exit[v], d.exitToComplete.Milliseconds())
			if variant.webhook {
				expectSlowStopPair(t, in, name, d.form)
			}
		}
	}
	native := "present"
	if !kube.NativeSidecars() {
		native = "absent"
	}
	var all []string
	for v, variant := range slowStopVariants {
		all = append(all, fmt.Sprintf("%s_ms=%v", variant.name, exit[v]))
	}
	t.Logf("E2E_TIMING slowstop main_exit_to_Complete kubernetes=%s native=%s grace_s=%d rounds=%d %s",
		kube.Version(), native, slowStopGrace, rounds, strings.Join(all, " "))
}

// expectSlowStopPair: the webhook in mode auto gave the deaf sidecar's
// Pod the pair, with the slow-stop reason where the cluster has native
// sidecars (elsewhere the cluster is the reason).
func expectSlowStopPair(t *testing.T, s *space, job string, form inject.Form) {
	t.Helper()
	if form != inject.FormPair {
		t.Errorf("Job %s: the webhook in mode auto gave %s, want the pair", job, form)
		return
	}
	pods, err := kube.Client().CoreV1().Pods(s.ns).List(s.ctx, metav1.ListOptions{LabelSelector: "job-name=" + job})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("Job %s's Pod: %v (%d)", job, err, len(pods.Items))
	}
	r := recordOf(t, &pods.Items[0])
	if kube.NativeSidecars() && !strings.Contains(r.Reason, "not known to stop on its stop signal") {
		t.Errorf("Job %s: the pair's reason %q does not say the sidecar may not stop", job, r.Reason)
	}
	t.Logf("Job %s: the pair, because %s", job, r.Reason)
}
