package cluster

import (
	"fmt"
	"net/http"

	"k8s.io/client-go/discovery"
	batchv1client "k8s.io/client-go/kubernetes/typed/batch/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// apiClient is the part of client-go's clientset the harness uses itself:
// the core and batch groups and discovery. The whole clientset, every
// API group's client, is the tests' (Client, client_e2e.go): built only
// with the e2e tag, so that make test, which compiles this package for
// its own tests and the bench's, does not compile a hundred packages of
// clients nothing there calls. All of them, the tests' clientset too,
// share one HTTP client and one rate limiter (cfg's), as one clientset's
// groups do.
type apiClient struct {
	cfg   *rest.Config
	http  *http.Client
	core  corev1client.CoreV1Interface
	batch batchv1client.BatchV1Interface
	disco discovery.DiscoveryInterface
}

func newAPIClient(cfg *rest.Config) (*apiClient, error) {
	shared := *cfg
	if shared.UserAgent == "" {
		shared.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	if shared.RateLimiter == nil && shared.QPS > 0 {
		if shared.Burst <= 0 {
			return nil, fmt.Errorf("a client of %s: burst must be above 0 when QPS is", shared.Host)
		}
		shared.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(shared.QPS, shared.Burst)
	}
	a := &apiClient{cfg: &shared}
	var err error
	if a.http, err = rest.HTTPClientFor(a.cfg); err != nil {
		return nil, err
	}
	if a.core, err = corev1client.NewForConfigAndClient(a.cfg, a.http); err != nil {
		return nil, err
	}
	if a.batch, err = batchv1client.NewForConfigAndClient(a.cfg, a.http); err != nil {
		return nil, err
	}
	if a.disco, err = discovery.NewDiscoveryClientForConfigAndClient(a.cfg, a.http); err != nil {
		return nil, err
	}
	return a, nil
}

func (a *apiClient) CoreV1() corev1client.CoreV1Interface    { return a.core }
func (a *apiClient) BatchV1() batchv1client.BatchV1Interface { return a.batch }
func (a *apiClient) Discovery() discovery.DiscoveryInterface { return a.disco }
