package kubectl

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	kjson "sigs.k8s.io/json"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/kubeapi"
)

// LimitRangeReader lists a namespace's LimitRanges through the API server.
type LimitRangeReader func(ctx context.Context, namespace string) ([]corev1.LimitRange, error)

// apiTimeout bounds reading a namespace's LimitRanges.
const apiTimeout = 30 * time.Second

// admit checks p's changes as the API server will check its Pods, by the
// webhook's rules: the install init container fitted into the namespace's
// LimitRanges (when they can be read; read holds those read, by
// namespace), the size of the annotations.
func admit(ctx context.Context, p *pod, opts *Options, read map[string][]corev1.LimitRange) error {
	if len(p.ops) == 0 {
		return nil
	}
	raw, before := p.raw, &p.before
	defer func() { p.raw, p.before = nil, corev1.Pod{} }()
	if opts.LimitRanges != nil {
		namespace := cmp.Or(p.namespace, opts.Namespace, "default")
		ranges, ok := read[namespace]
		if !ok {
			var err error
			if ranges, err = opts.LimitRanges(ctx, namespace); err != nil {
				return fmt.Errorf("read the LimitRanges of namespace %s, to fit the %s init container into them: %s (check --kubeconfig and --context, or use --offline)",
					namespace, inject.InitContainer, inject.OneLine(err.Error(), inject.MaxReason))
			}
			read[namespace] = ranges
		}
		var err error
		if p.ops, err = inject.FitLimitRanges(raw, before, p.ops, ranges); err != nil {
			return fmt.Errorf("namespace %s: %w", namespace, err)
		}
	}
	return inject.CheckAnnotations(before.Annotations, p.ops)
}

// readTyped reads p's template as the API server reads it, for check:
// whole for the LimitRange fitting, else its metadata alone.
func (p *pod) readTyped(whole bool) error {
	obj := p.obj
	if !whole {
		obj = map[string]any{}
		if meta, ok := p.obj["metadata"]; ok {
			obj["metadata"] = meta
		}
	}
	var err error
	if p.raw, err = json.Marshal(obj); err != nil { // the template as kubectl read it
		return err
	}
	return kjson.UnmarshalCaseSensitivePreserveInts(p.raw, &p.before)
}

// Cluster is how the plugin reaches the API server, as kubectl does:
// the kubeconfig, its context, and the namespace of objects that name none.
type Cluster struct {
	Kubeconfig string `placeholder:"PATH" help:"Kubeconfig for reading the namespaces' LimitRanges, to fit the install container into them, and (without --kube-version) whether the cluster has native sidecars (default: $$KUBECONFIG, else ~/.kube/config; none: not checked, with a note). Not read with --offline."`
	Context    string `placeholder:"NAME" help:"The kubeconfig's context to use (default: its current one)."`
	Namespace  string `short:"n" placeholder:"NAME" help:"Namespace of the objects that name none (default: the context's)."`
}

// limitRanges connects to the cluster: no reader, and why, without any
// kubeconfig.
func (c Cluster) limitRanges() (read LimitRangeReader, namespace, unchecked string, err error) {
	config, namespace, unchecked, err := c.config() // target.go
	if err != nil || config == nil {
		return nil, namespace, unchecked, err
	}
	client, err := kubeapi.CoreClient(kubeapi.Bounded(config, kubeapi.MaxAnswer))
	if err != nil {
		return nil, "", "", fmt.Errorf("kubeconfig: %w", err)
	}
	return func(ctx context.Context, namespace string) ([]corev1.LimitRange, error) {
		return kubeapi.LimitRanges(ctx, client, namespace)
	}, namespace, "", nil
}
