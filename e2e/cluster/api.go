package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// waitAPIServer waits for /readyz: etcd reached, RBAC and the built-in
// objects bootstrapped.
func (c *Cluster) waitAPIServer(d *daemon) error {
	err := poll(2*time.Minute, 200*time.Millisecond, func() (bool, string, error) {
		if err := d.running(); err != nil {
			return false, "", err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		body, err := c.client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil {
			return false, fmt.Sprintf("%v %s", err, body), nil
		}
		return true, "", nil
	})
	if err != nil {
		return fmt.Errorf("kube-apiserver did not become ready: %w\n%s", err, tailFile(d.log, 30))
	}
	return nil
}

// waitUsable waits until a Pod can run: the Node is Ready without a
// NoSchedule taint, and the default namespace has its ServiceAccount and
// the kube-root-ca.crt ConfigMap (Pods are refused, or cannot mount their
// token, before).
func (c *Cluster) waitUsable() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := poll(2*time.Minute, 200*time.Millisecond, func() (bool, string, error) {
		node, err := c.client.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		for _, t := range node.Spec.Taints {
			if t.Effect == corev1.TaintEffectNoSchedule {
				return false, "Node tainted " + t.Key, nil
			}
		}
		for _, cond := range node.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status != corev1.ConditionTrue {
				return false, fmt.Sprintf("Node not Ready: %s %s", cond.Reason, cond.Message), nil
			}
		}
		return true, "", nil
	})
	if err != nil {
		return fmt.Errorf("Node %s: %w (see %s/kubelet.log)", NodeName, err, c.logs)
	}
	return c.waitNamespaceReady(ctx, metav1.NamespaceDefault)
}

func (c *Cluster) waitNamespaceReady(ctx context.Context, ns string) error {
	return poll(2*time.Minute, 100*time.Millisecond, func() (bool, string, error) {
		if _, err := c.client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{}); err != nil {
			return false, "no default ServiceAccount yet: " + err.Error(), ctx.Err()
		}
		if _, err := c.client.CoreV1().ConfigMaps(ns).Get(ctx, "kube-root-ca.crt", metav1.GetOptions{}); err != nil {
			return false, "no kube-root-ca.crt ConfigMap yet: " + err.Error(), ctx.Err()
		}
		return true, "", nil
	})
}

// CreateNamespace creates a namespace named prefix plus a random suffix,
// with labels, and returns its name once Pods can run in it (its default
// ServiceAccount and kube-root-ca.crt ConfigMap exist).
func (c *Cluster) CreateNamespace(ctx context.Context, prefix string, labels ...map[string]string) (string, error) {
	meta := metav1.ObjectMeta{GenerateName: prefix + "-"}
	if len(labels) > 0 {
		meta.Labels = labels[0]
	}
	ns, err := c.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: meta}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("create namespace %s-*: %w", prefix, err)
	}
	if err := c.waitNamespaceReady(ctx, ns.Name); err != nil {
		return "", fmt.Errorf("namespace %s: %w", ns.Name, err)
	}
	return ns.Name, nil
}

// DeleteNamespace deletes a namespace and waits until it is gone: every
// Pod in it stopped by the kubelet, with no process left in its cgroup
// (where the node is this machine: Powers.NodeProcesses).
func (c *Cluster) DeleteNamespace(ctx context.Context, ns string) error {
	pods, err := c.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	policy := metav1.DeletePropagationBackground
	err = c.client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{PropagationPolicy: &policy})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete namespace %s: %w", ns, err)
	}
	err = poll(3*time.Minute, 200*time.Millisecond, func() (bool, string, error) {
		_, err := c.client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		return false, fmt.Sprintf("namespace %s still exists (%v)", ns, err), ctx.Err()
	})
	if err != nil || !c.feat.NodeProcesses {
		return err
	}
	for _, pod := range pods.Items {
		if err := c.waitPodProcessesGone(string(pod.UID)); err != nil {
			return fmt.Errorf("Pod %s/%s: %w", ns, pod.Name, err)
		}
	}
	return nil
}

// waitPodProcessesGone waits until no process is left in a Pod's cgroup.
func (c *Cluster) waitPodProcessesGone(uid string) error {
	return poll(90*time.Second, 200*time.Millisecond, func() (bool, string, error) {
		pids, err := c.PodProcesses(uid)
		return err == nil && len(pids) == 0, fmt.Sprintf("processes %v still in the Pod's cgroup", pids), err
	})
}

// PodProcesses lists the processes in a Pod's cgroup (by the Pod's UID):
// none once the kubelet has stopped it.
func (c *Cluster) PodProcesses(uid string) ([]int, error) {
	if !c.feat.NodeProcesses {
		return nil, errNoPower("PodProcesses", "NodeProcesses")
	}
	cg, err := findCgroup(c.cgroups+"/pods", "pod"+uid)
	if err != nil || cg == "" {
		return nil, err
	}
	return cgroupPids(cg)
}

// ContainerProcesses lists the processes of a running container, given
// its status's containerID ("containerd://ID").
func (c *Cluster) ContainerProcesses(containerID string) ([]int, error) {
	if !c.feat.NodeProcesses {
		return nil, errNoPower("ContainerProcesses", "NodeProcesses")
	}
	_, id, ok := strings.Cut(containerID, "://")
	if !ok || id == "" {
		return nil, fmt.Errorf("container ID %q is not RUNTIME://ID", containerID)
	}
	cg, err := findCgroup(c.cgroups+"/pods", id)
	if err != nil {
		return nil, err
	}
	if cg == "" {
		return nil, fmt.Errorf("no cgroup for container %s", id)
	}
	return cgroupPids(cg)
}

// deleteEverything deletes every CronJob, Job and Pod in every namespace
// but kube-system, through the API, and waits until no Pod is left and no
// process in any Pod's cgroup: the kubelet stopped them as it would in a
// real cluster.
func (c *Cluster) deleteEverything(ctx context.Context) error {
	nss, err := c.client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	policy := metav1.DeletePropagationBackground
	del := metav1.DeleteOptions{PropagationPolicy: &policy}
	var errs []error
	for _, ns := range nss.Items {
		if ns.Name == metav1.NamespaceSystem {
			continue
		}
		batch := c.client.BatchV1()
		errs = append(errs, batch.CronJobs(ns.Name).DeleteCollection(ctx, del, metav1.ListOptions{}))
		errs = append(errs, batch.Jobs(ns.Name).DeleteCollection(ctx, del, metav1.ListOptions{}))
		errs = append(errs, c.client.CoreV1().Pods(ns.Name).DeleteCollection(ctx, del, metav1.ListOptions{}))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("deleting every workload: %w", err)
	}
	return poll(2*time.Minute, 200*time.Millisecond, func() (bool, string, error) {
		pods, err := c.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error(), ctx.Err()
		}
		if n := len(pods.Items); n > 0 {
			return false, fmt.Sprintf("%d Pods left, e.g. %s/%s", n, pods.Items[0].Namespace, pods.Items[0].Name), nil
		}
		pids, err := cgroupPids(c.cgroups + "/pods")
		return err == nil && len(pids) == 0, fmt.Sprintf("processes in Pod cgroups: %v", pids), err
	})
}
