//go:build e2e

package cluster

import (
	"fmt"

	"k8s.io/client-go/kubernetes"
)

// Client is a cluster-admin clientset, built on first use.
func (c *Cluster) Client() kubernetes.Interface {
	c.clientsetOnce.Do(func() {
		cs, err := kubernetes.NewForConfig(c.rest)
		if err != nil {
			// c.rest has served the harness already: only a bug gets here.
			panic(fmt.Sprintf("a clientset for %s: %v", c.rest.Host, err))
		}
		c.clientset = cs
	})
	return c.clientset.(kubernetes.Interface)
}
