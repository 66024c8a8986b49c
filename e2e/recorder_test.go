//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// observation is one version of an object as a watch delivered it, and
// when: the moment a user's `kubectl wait` or controller would see it.
type observation[T any] struct {
	at      time.Time
	obj     T
	deleted bool
}

// recorder keeps every version a watch delivers of the objects of one kind
// in one namespace, deleted ones included: a Job's Pods are gone from the
// API soon after they end, but their last status stays here. Tests wait on
// it for a condition (no polling, no sleeps) and read the history.
type recorder[T metav1.Object] struct {
	mu      sync.Mutex
	history map[types.UID][]observation[T]
	order   []types.UID   // by first appearance
	changed chan struct{} // closed and replaced on every event
	stop    context.CancelFunc
}

func newRecorder[T metav1.Object](lw cache.ListerWatcher, example runtime.Object) *recorder[T] {
	r := &recorder[T]{history: map[types.UID][]observation[T]{}, changed: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	add := func(obj any, deleted bool) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		o, ok := obj.(T)
		if !ok {
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if _, seen := r.history[o.GetUID()]; !seen {
			r.order = append(r.order, o.GetUID())
		}
		r.history[o.GetUID()] = append(r.history[o.GetUID()], observation[T]{at: time.Now(), obj: o, deleted: deleted})
		close(r.changed)
		r.changed = make(chan struct{})
	}
	_, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    example,
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { add(obj, false) },
			UpdateFunc: func(_, obj any) { add(obj, false) },
			DeleteFunc: func(obj any) { add(obj, true) },
		},
	})
	go ctrl.RunWithContext(ctx)
	return r
}

func podRecorder(ns string) *recorder[*corev1.Pod] {
	lw := cache.NewListWatchFromClient(kube.Client().CoreV1().RESTClient(), "pods", ns, fields.Everything())
	return newRecorder[*corev1.Pod](lw, &corev1.Pod{})
}

func jobRecorder(ns string) *recorder[*batchv1.Job] {
	lw := cache.NewListWatchFromClient(kube.Client().BatchV1().RESTClient(), "jobs", ns, fields.Everything())
	return newRecorder[*batchv1.Job](lw, &batchv1.Job{})
}

// latest is the last version of every object seen, in order of first
// appearance, with whether it has been deleted.
func (r *recorder[T]) latest() []observation[T] {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]observation[T], 0, len(r.order))
	for _, uid := range r.order {
		h := r.history[uid]
		out = append(out, h[len(h)-1])
	}
	return out
}

// first returns the first observation of the object uid for which cond
// holds, and whether there is one.
func (r *recorder[T]) first(uid types.UID, cond func(T) bool) (observation[T], bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, o := range r.history[uid] {
		if cond(o.obj) {
			return o, true
		}
	}
	return observation[T]{}, false
}

// waitFor waits until check, given the latest observations, says done; it
// returns an error with check's last reason at the deadline.
func (r *recorder[T]) waitFor(timeout time.Duration, check func([]observation[T]) (bool, string)) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		changed := r.changed
		r.mu.Unlock()
		done, reason := check(r.latest())
		if done {
			return nil
		}
		select {
		case <-changed:
		case <-deadline.C:
			return fmt.Errorf("not within %v: %s", timeout, reason)
		}
	}
}
