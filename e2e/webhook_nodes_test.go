//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/job-signal/job-signal/inject"
)

// TestWebhookNodeSkew: a Node whose kubelet is older than the control
// plane (the normal state during an upgrade) keeps mode auto on the pair,
// and its removal gives native sidecars back within the detect interval.
// The Node is an object of the real API server with no kubelet behind it
// (status set through the status subresource, as a kubelet sets it),
// unschedulable and tainted so that no Pod is put on it. Not parallel:
// every webhook in mode auto sees it, so it runs while no other test
// does. On 1.30 the API server itself holds native sidecars back: the
// pair throughout, and no Node is named.
func TestWebhookNodeSkew(t *testing.T) {
	const interval = 5 * time.Second
	s := newSpace(t, "webhook-nodes", map[string]string{inject.LabelInject: "enabled"})
	hook := startWebhook(t, "--mode=auto", fmt.Sprintf("--detect-interval=%s", interval))
	native := kube.Features().NativeSidecars
	hook.waitEvent(t, time.Minute, func(e webhookEvent) bool {
		return e.Msg == "cluster checked" && e.NativeSidecars != nil && *e.NativeSidecars == native
	})
	registerWebhook(t, hook.addr, s.ns)
	form := func() string {
		t.Helper()
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{GenerateName: "skew-", Labels: map[string]string{inject.LabelInject: "enabled"}},
			// A grace no longer than the pair's for the sidecar, which is
			// not known to stop promptly: else auto keeps the pair for it.
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, TerminationGracePeriodSeconds: ptr.To(int64(5)),
				Containers: []corev1.Container{
					{Name: "main", Image: busyboxImage, ImagePullPolicy: corev1.PullNever, Command: []string{"true"}},
					{Name: "sidecar", Image: busyboxImage, ImagePullPolicy: corev1.PullNever, Command: []string{"sleep", "3600"}}}},
		}
		got, err := kube.Client().CoreV1().Pods(s.ns).Create(s.ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Spec.Containers) == 1 {
			return string(inject.FormNative)
		}
		return string(inject.FormPair)
	}
	want := map[bool]string{true: string(inject.FormNative), false: string(inject.FormPair)}
	if got := form(); got != want[native] {
		t.Fatalf("before the old Node: form %s, want %s", got, want[native])
	}

	name := "e2e-old-kubelet-" + s.ns
	nodes := kube.Client().CoreV1().Nodes()
	_, err := nodes.Create(s.ctx, &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.NodeSpec{Unschedulable: true,
			Taints: []corev1.Taint{{Key: "job-signal.dev/e2e-no-kubelet", Effect: corev1.TaintEffectNoSchedule}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	deleted := false
	t.Cleanup(func() {
		if !deleted {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := nodes.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				t.Errorf("delete Node %s: %v", name, err)
			}
		}
	})
	// The node lifecycle controller may change the new Node first (its
	// taints): read it again until the status is written.
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := nodes.Get(s.ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		node.Status.NodeInfo.KubeletVersion = "v1.30.0"
		_, err = nodes.UpdateStatus(s.ctx, node, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if native {
		// Created without a status, the Node holds them back at once (no
		// version that can be read): wait for the line with its version.
		hook.waitEvent(t, time.Minute, func(e webhookEvent) bool {
			return strings.HasPrefix(e.Msg, "a Node holds native sidecars back") && e.Node == name && e.KubeletVersion == "v1.30.0"
		})
		if got := hook.metric(t, "job_signal_webhook_nodes_holding_back_native_sidecars"); got != 1 {
			t.Errorf("job_signal_webhook_nodes_holding_back_native_sidecars %v, want 1", got)
		}
	}
	if got := form(); got != string(inject.FormPair) {
		t.Errorf("with a Node of kubelet 1.30: form %s, want pair", got)
	}

	if err := nodes.Delete(s.ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deleted = true
	removed := time.Now()
	if native {
		hook.waitEvent(t, time.Minute, func(e webhookEvent) bool {
			return strings.HasPrefix(e.Msg, "a Node no longer holds native sidecars back") && e.Node == name
		})
		if elapsed := time.Since(removed); elapsed > interval {
			t.Errorf("native sidecars came back %s after the Node was deleted, more than the detect interval %s", elapsed, interval)
		}
		if got := hook.metric(t, "job_signal_webhook_nodes_holding_back_native_sidecars"); got != 0 {
			t.Errorf("job_signal_webhook_nodes_holding_back_native_sidecars %v, want 0", got)
		}
	}
	if got := form(); got != want[native] {
		t.Errorf("after the old Node left: form %s, want %s", got, want[native])
	}
}
