package cluster

import (
	"k8s.io/client-go/discovery"
	batchv1client "k8s.io/client-go/kubernetes/typed/batch/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
)

// apiClient is the part of client-go's clientset the harness uses itself:
// the core and batch groups and discovery. The whole clientset, every
// API group's client, is the tests' (Client, client_e2e.go): built only
// with the e2e tag, so that make test, which compiles this package for
// its own tests and the bench's, does not compile a hundred packages of
// clients nothing there calls.
type apiClient struct {
	core  corev1client.CoreV1Interface
	batch batchv1client.BatchV1Interface
	disco discovery.DiscoveryInterface
}

func newAPIClient(cfg *rest.Config) (*apiClient, error) {
	core, err := corev1client.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	batch, err := batchv1client.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &apiClient{core: core, batch: batch, disco: disco}, nil
}

func (a *apiClient) CoreV1() corev1client.CoreV1Interface    { return a.core }
func (a *apiClient) BatchV1() batchv1client.BatchV1Interface { return a.batch }
func (a *apiClient) Discovery() discovery.DiscoveryInterface { return a.disco }
