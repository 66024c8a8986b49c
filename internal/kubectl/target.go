// Which form inject writes (--mode) for which cluster (--kube-version,
// else the current kubeconfig's cluster when it answers, else unknown).

package kubectl

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/kubeapi"
	"github.com/job-signal/job-signal/internal/version"
)

// detectTimeout bounds asking the cluster what it offers: an unreachable
// cluster is then an unknown one, not a hang.
const detectTimeout = 10 * time.Second

// parseKubeVersion reads --kube-version (v1.33, 1.30.2, v1.31.0-gke.1)
// as the cluster it names, by inject's rule (ClusterFrom): native sidecars
// from 1.33, with no Node older than the version given.
func parseKubeVersion(s string) (inject.Cluster, error) {
	if _, err := inject.ParseKubeVersion(s); err != nil {
		return inject.Cluster{}, fmt.Errorf("--kube-version: %w; give the oldest of the cluster's API server and kubelets (kubectl version, kubectl get nodes)", err)
	}
	if s[0] != 'v' {
		s = "v" + s
	}
	return inject.ClusterFrom(s, nil), nil
}

// asksCluster says whether the form needs the cluster asked: not with
// --mode pair (the pair runs anywhere), --kube-version or --offline.
func asksCluster(mode inject.Mode, kubeVersion string, offline bool) bool {
	return mode != inject.ModePair && kubeVersion == "" && !offline
}

// detected is the cluster asked, or why it is not known.
type detected struct {
	cluster inject.Cluster
	unknown string
}

// decideTarget is the target inject chooses forms for, from the flags
// and the cluster's answer; note says why auto writes the pair.
func decideTarget(mode inject.Mode, kubeVersion string, offline bool, asked detected) (target inject.Target, note string, err error) {
	target.Mode = mode
	switch {
	case kubeVersion != "":
		target.Cluster, err = parseKubeVersion(kubeVersion)
		return target, "", err
	case mode == inject.ModePair:
		return target, "", nil
	case offline:
		asked = detected{unknown: "--offline"}
	case asked.unknown == "" && !asked.cluster.Known:
		asked.unknown = "not asked"
	}
	if asked.unknown == "" {
		// A cluster the dry run says keeps native sidecars is held to
		// inject's rule by its API server's version (ClusterFrom): before
		// 1.33 a kubelet may have them off. One without keeps its reason.
		target.Cluster = asked.cluster
		if asked.cluster.NativeSidecars {
			target.Cluster = inject.ClusterFrom(asked.cluster.Version, nil)
		}
		return target, "", nil
	}
	if mode == inject.ModeAuto {
		note = fmt.Sprintf("the cluster is not known (%s): --mode auto writes job-signal's pair, which works on any cluster; for native sidecars give --kube-version (1.%d or later) or --mode native", asked.unknown, inject.NativeMinor)
	}
	return target, note, nil
}

// ask asks the cluster of the kubeconfig what it offers, within
// detectTimeout, as the webhook reads it (kubeapi.Detect: the API
// server's version and every Node's kubelet version); a cluster that
// cannot be reached, or does not let the user list its Nodes, is an
// unknown one, and the note says which.
func (c Cluster) ask(ctx context.Context) detected {
	config, _, why, err := c.config()
	switch {
	case err != nil:
		return detected{unknown: err.Error()}
	case config == nil:
		return detected{unknown: why}
	}
	ctx, cancel := context.WithTimeout(ctx, detectTimeout)
	defer cancel()
	cluster, err := kubeapi.Detect(ctx, config)
	switch {
	case apierrors.IsForbidden(err):
		return detected{unknown: "the kubeconfig's user may not list the cluster's Nodes, whose kubelet versions say whether native sidecars run on every one (it needs list on nodes)"}
	case err != nil:
		return detected{unknown: "it did not answer: " + inject.OneLine(err.Error(), inject.MaxReason)}
	}
	return detected{cluster: cluster}
}

// config is the kubeconfig's client configuration, as kubectl finds it,
// and the namespace of the objects that name none; nil and why without
// any kubeconfig.
func (c Cluster) config() (config *rest.Config, namespace, why string, err error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = c.Kubeconfig
	cfg := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
		&clientcmd.ConfigOverrides{CurrentContext: c.Context, Context: clientcmdapi.Context{Namespace: c.Namespace}})
	config, err = cfg.ClientConfig()
	if clientcmd.IsEmptyConfig(err) {
		return nil, c.Namespace, "no kubeconfig: no --kubeconfig, $KUBECONFIG or ~/.kube/config", nil
	}
	if err == nil {
		namespace, _, err = cfg.Namespace()
	}
	if err != nil {
		return nil, "", "", fmt.Errorf("kubeconfig: %s", inject.OneLine(err.Error(), inject.MaxReason))
	}
	config.UserAgent = "kubectl-job_signal/" + version.Release
	config.Timeout = apiTimeout
	return config, namespace, "", nil
}

// target decides the target from the flags, asking the cluster when
// they leave it open.
func (c *InjectCmd) target(ctx context.Context) (inject.Target, string, error) {
	mode, err := inject.ParseMode(c.Mode)
	if err != nil {
		return inject.Target{}, "", fmt.Errorf("--mode: %w", err)
	}
	var asked detected
	if asksCluster(mode, c.KubeVersion, c.Offline) {
		asked = c.ask(ctx)
	}
	return decideTarget(mode, c.KubeVersion, c.Offline, asked)
}
