package webhook

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/kubeapi"
)

// informerNodes is the NodeSource of a Node informer (kubeapi.NodeInformer):
// its handlers only signal, at most one signal waiting, so that a burst
// of changes costs the loop one reading of the store.
type informerNodes struct {
	informer cache.SharedIndexInformer
	changed  chan struct{}
	errs     chan error
}

// newInformerNodes registers the signalling handlers on informer, which
// must not run yet.
func newInformerNodes(informer cache.SharedIndexInformer) (*informerNodes, error) {
	n := &informerNodes{informer: informer, changed: make(chan struct{}, 1), errs: make(chan error, 1)}
	_, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { n.signal() },
		UpdateFunc: func(old, cur any) {
			o, ok1 := old.(*corev1.Node)
			c, ok2 := cur.(*corev1.Node)
			if !ok1 || !ok2 || kubeapi.NodeOf(o) != kubeapi.NodeOf(c) { // a status update of the same kubelet changes nothing here
				n.signal()
			}
		},
		DeleteFunc: func(any) { n.signal() },
	})
	if err != nil {
		return nil, err
	}
	err = informer.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		select {
		case n.errs <- err:
		default: // the loop has one to read already
		}
	})
	return n, err
}

func (n *informerNodes) signal() {
	select {
	case n.changed <- struct{}{}:
	default:
	}
}

func (n *informerNodes) Run(ctx context.Context) {
	go n.informer.Run(ctx.Done())
	// The first list's end is a change too: before it the loop decides nothing.
	if cache.WaitForCacheSync(ctx.Done(), n.informer.HasSynced) {
		n.signal()
	}
}

func (n *informerNodes) List() ([]inject.Node, bool) {
	if !n.informer.HasSynced() {
		return nil, false
	}
	objs := n.informer.GetStore().List()
	nodes := make([]inject.Node, 0, len(objs))
	for _, o := range objs {
		if node, ok := o.(*corev1.Node); ok {
			nodes = append(nodes, kubeapi.NodeOf(node))
		}
	}
	return nodes, true
}

func (n *informerNodes) Changed() <-chan struct{} { return n.changed }
func (n *informerNodes) Errors() <-chan error     { return n.errs }
