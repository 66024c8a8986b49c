//go:build e2e

package cluster

import (
	"fmt"

	"k8s.io/client-go/kubernetes"
)

// Client is a cluster-admin clientset, built on first use, with the
// harness's HTTP client and rate limiter.
func (c *Cluster) Client() kubernetes.Interface {
	c.clientsetOnce.Do(func() {
		cs, err := kubernetes.NewForConfigAndClient(c.client.cfg, c.client.http)
		if err != nil {
			// The harness's client serves already: only a bug gets here.
			panic(fmt.Sprintf("a clientset for %s: %v", c.client.cfg.Host, err))
		}
		c.clientset = cs
	})
	return c.clientset.(kubernetes.Interface)
}
