package kubeapi

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/rest"

	"github.com/job-signal/job-signal/inject"
)

// DetectTimeout bounds one Detect: the API server's version, then the
// Nodes a page at a time.
const DetectTimeout = 10 * time.Second

// NodePage is how many Nodes one list request asks for. A Node is a few
// KiB to a few tens of KiB (its images, its conditions): a page stays
// well within MaxAnswer, and a cluster of thousands of Nodes is read in a
// few dozen requests, never held whole.
const NodePage = 100

// maxNodePages bounds the pages one listing follows: 100,000 Nodes, far
// past any cluster, so that a server that keeps answering "continue" ends.
const maxNodePages = 1000

// Detect says what the cluster offers job-signal, as inject.ClusterFrom
// decides it from the API server's version (/version) and every Node's
// kubelet version (status.nodeInfo.kubeletVersion): native sidecars only
// where all of them have them. It creates nothing and needs get on
// /version (every authenticated user has it) and list on nodes. It gives
// up after DetectTimeout, or ctx's deadline if sooner. An error wraps the
// API server's (apierrors.IsForbidden tells a user without list on
// nodes).
func Detect(ctx context.Context, config *rest.Config) (inject.Cluster, error) {
	ctx, cancel := context.WithTimeout(ctx, DetectTimeout)
	defer cancel()
	client, err := CoreClient(Bounded(config, MaxAnswer))
	if err != nil {
		return inject.Cluster{}, fmt.Errorf("detect: %w", err)
	}
	server, err := ServerVersion(ctx, client)
	if err != nil {
		return inject.Cluster{}, err
	}
	nodes, err := Nodes(ctx, client)
	if err != nil {
		return inject.Cluster{}, err
	}
	return inject.ClusterFrom(server, nodes), nil
}

// ServerVersion reads the API server's version (its gitVersion, v1.37.2)
// with client, whose answers should be bounded (Bounded).
func ServerVersion(ctx context.Context, client rest.Interface) (string, error) {
	var v version.Info
	body, err := client.Get().AbsPath("/version").DoRaw(ctx)
	if err == nil {
		err = json.Unmarshal(body, &v)
	}
	if err == nil && v.GitVersion == "" {
		err = fmt.Errorf("the answer has no gitVersion")
	}
	if err != nil {
		return "", fmt.Errorf("read the API server's version: %w", err)
	}
	return v.GitVersion, nil
}

// Nodes lists every Node's name and kubelet version, NodePage at a time
// (each page bounded by the client), keeping only those two facts of
// each.
func Nodes(ctx context.Context, client rest.Interface) ([]inject.Node, error) {
	var nodes []inject.Node
	next := ""
	for range maxNodePages {
		var list corev1.NodeList
		err := client.Get().Resource("nodes").
			Param("limit", strconv.Itoa(NodePage)).Param("continue", next).
			Do(ctx).Into(&list)
		if err != nil {
			if apierrors.IsForbidden(err) {
				err = fmt.Errorf("%w (reading every Node's kubelet version needs list on nodes: the chart's ClusterRole gives it)", err)
			}
			return nil, fmt.Errorf("list the Nodes: %w", err)
		}
		for i := range list.Items {
			nodes = append(nodes, NodeOf(&list.Items[i]))
		}
		if next = list.Continue; next == "" {
			return nodes, nil
		}
	}
	return nil, fmt.Errorf("list the Nodes: still more after %d pages of %d", maxNodePages, NodePage)
}

// NodeOf is what the choice of form reads of a Node.
func NodeOf(n *corev1.Node) inject.Node {
	return inject.Node{Name: n.Name, KubeletVersion: n.Status.NodeInfo.KubeletVersion}
}

// nodeSummary is a Node cut down to what NodeOf reads, and what an
// informer's store needs (its name and resource version): a few dozen
// bytes where the Node was kilobytes.
func nodeSummary(n *corev1.Node) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, ResourceVersion: n.ResourceVersion},
		Status:     corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KubeletVersion: n.Status.NodeInfo.KubeletVersion}},
	}
}
