package kubeapi

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// NodeInformer watches the Nodes for a process that keeps what they say
// current (the webhook), holding of each only its name, resource version
// and kubelet version (nodeSummary): a few dozen bytes a Node, however
// large the cluster. The informer's transform cuts each Node a watch
// delivers; its lists ask for NodePage Nodes at a time from the API
// server's storage (not all at once from its cache, which ignores the
// page size) and cut each page as it comes, so the whole list is never
// held either. Read a Node of its store with NodeOf.
func NodeInformer(config *rest.Config) (cache.SharedIndexInformer, error) {
	lister, err := CoreClient(Bounded(config, MaxAnswer))
	if err != nil {
		return nil, err
	}
	watcher, err := CoreClient(config) // a watch is a stream: no bound on its length
	if err != nil {
		return nil, err
	}
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			if opts.ResourceVersion == "0" && opts.Continue == "" {
				opts.ResourceVersion = ""
			}
			opts.Limit = NodePage
			list := &corev1.NodeList{}
			if err := lister.Get().Resource("nodes").VersionedParams(&opts, metav1.ParameterCodec).Do(ctx).Into(list); err != nil {
				return nil, err
			}
			for i := range list.Items {
				list.Items[i] = *nodeSummary(&list.Items[i])
			}
			return list, nil
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.Watch = true
			return watcher.Get().Resource("nodes").VersionedParams(&opts, metav1.ParameterCodec).Watch(ctx)
		},
	}
	informer := cache.NewSharedIndexInformer(lw, &corev1.Node{}, 0, cache.Indexers{})
	if err := informer.SetTransform(summarize); err != nil {
		return nil, fmt.Errorf("the Node informer's transform: %w", err)
	}
	return informer, nil
}

// summarize is NodeInformer's transform: a Node becomes its summary;
// anything else (a deleted Node's tombstone) passes as it is.
func summarize(obj any) (any, error) {
	if n, ok := obj.(*corev1.Node); ok {
		return nodeSummary(n), nil
	}
	return obj, nil
}
