package webhook

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	kjson "sigs.k8s.io/json"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/resolve"
	"github.com/job-signal/job-signal/internal/version"
)

// mutate injects pod (raw, as the API server sent it) and returns the
// changes, decided once by inject, as JSON Patch operations on raw; or
// why the Pod needs nothing; or a failure saying why it cannot.
func (c *Config) mutate(ctx context.Context, namespace string, raw []byte, pod *corev1.Pod) (ops []inject.Op, warnings []string, nothing string, err error) {
	plan, err := inject.Prepare(raw)
	if err != nil {
		return nil, nil, "", fail(reasonRefused, err)
	}
	if why := plan.Nothing(); why != "" {
		return nil, nil, why, nil
	}
	var images map[string]inject.ImageConfig
	if needs := plan.Needs(); len(needs) > 0 {
		ctx, cancel := resolve.Timeout(ctx, c.RegistryTimeout)
		defer cancel()
		keychain, notes, err := c.keychain(ctx, namespace, pod)
		if err != nil {
			return nil, nil, "", err
		}
		platform := resolve.Platform{OS: "linux", Architecture: pod.Spec.NodeSelector[corev1.LabelArchStable]}
		images, err = c.Resolver.Resolve(ctx, needs, keychain, platform)
		if err != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				err = fmt.Errorf("the registry did not answer within %s: %w", c.RegistryTimeout, err)
			}
			if len(notes) > 0 {
				err = fmt.Errorf("%w (%s)", err, strings.Join(notes, "; "))
			}
			if resolve.Transient(err) {
				return nil, nil, "", fail(reasonRegistry, err)
			}
			return nil, nil, "", fail(reasonImage, err)
		}
	}
	res, err := plan.Inject(images, cmp.Or(c.Installer, version.Image))
	if err != nil {
		return nil, nil, "", fail(reasonRefused, err)
	}
	ops = res.Ops
	if c.LimitRanges != nil && len(ops) > 0 {
		ranges, err := c.LimitRanges(namespace)
		if err != nil {
			return nil, nil, "", fail(reasonAPI, fmt.Errorf("read the LimitRanges of namespace %s: %w", namespace, err))
		}
		if ops, err = fitOps(raw, ops, ranges); err != nil {
			return nil, nil, "", fail(reasonLimitRange, err)
		}
	}
	if size := annotationsSize(annotationsAfter(pod.Annotations, ops)); size > totalAnnotationLimit {
		return nil, nil, "", fail(reasonAnnotations, fmt.Errorf("with job-signal's record (%s) the Pod's annotations would take %d bytes, over the API server's limit of %d",
			inject.AnnotationInjected, size, totalAnnotationLimit))
	}
	return ops, res.Warnings, "", nil
}

// fitOps fits the install init container that ops add into the
// namespace's LimitRanges (limitrange.go): it reads the Pod whole, applies
// ops to raw to see the Pod as the API server will, fits the container,
// and writes the resources it was given into the op that adds it.
func fitOps(raw []byte, ops []inject.Op, ranges []corev1.LimitRange) ([]inject.Op, error) {
	if len(ranges) == 0 {
		return ops, nil
	}
	before, after := &corev1.Pod{}, &corev1.Pod{}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, before); err != nil {
		return nil, err
	}
	patched, err := inject.Apply(raw, ops)
	if err != nil {
		return nil, err
	}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(patched, after); err != nil {
		return nil, err
	}
	if err := fitLimitRanges(before, after, ranges); err != nil {
		return nil, err
	}
	i := slices.IndexFunc(after.Spec.InitContainers, func(c corev1.Container) bool { return c.Name == inject.InitContainer })
	if i < 0 {
		return ops, nil
	}
	return withInstallResources(ops, after.Spec.InitContainers[i].Resources), nil
}

// withInstallResources is ops with the install container they add (alone,
// or as the list of init containers) given resources r.
func withInstallResources(ops []inject.Op, r corev1.ResourceRequirements) []inject.Op {
	out := slices.Clone(ops)
	set := func(v any) any {
		f, ok := v.(inject.Fields)
		if !ok || !slices.Contains(f, inject.Field{Key: "name", Value: inject.InitContainer}) {
			return v
		}
		f = slices.Clone(f)
		for j := range f {
			if f[j].Key == "resources" {
				f[j].Value = r
			}
		}
		return f
	}
	for i, o := range out {
		switch v := o.Value.(type) {
		case inject.Fields:
			out[i].Value = set(v)
		case []any:
			list := slices.Clone(v)
			for j := range list {
				list[j] = set(list[j])
			}
			out[i].Value = list
		}
	}
	return out
}

// annotationsAfter is the Pod's annotations once ops are applied. Of
// inject's ops only these touch them: adding or removing one annotation
// (its record), and setting metadata, or its annotations, whole.
func annotationsAfter(before map[string]string, ops []inject.Op) map[string]string {
	out := maps.Clone(before)
	for _, o := range ops {
		key, one := strings.CutPrefix(o.Path, "/metadata/annotations/")
		switch {
		case one && o.Op == "remove":
			delete(out, strings.ReplaceAll(strings.ReplaceAll(key, "~1", "/"), "~0", "~"))
		case one:
			if out == nil {
				out = map[string]string{}
			}
			var v string
			b, _ := json.Marshal(o.Value)
			json.Unmarshal(b, &v)
			out[strings.ReplaceAll(strings.ReplaceAll(key, "~1", "/"), "~0", "~")] = v
		case o.Path == "/metadata" || o.Path == "/metadata/annotations":
			var whole struct {
				Annotations map[string]string `json:"annotations"`
			}
			b, _ := json.Marshal(o.Value)
			if o.Path == "/metadata" {
				json.Unmarshal(b, &whole)
			} else {
				json.Unmarshal(b, &whole.Annotations)
			}
			out = whole.Annotations // nil for a remove
		}
	}
	return out
}

// keychain is the Pod's pull secrets, then the webhook's own Docker
// config. A secret that does not exist, or that the webhook may not read
// (its namespace is not enabled), is left out, as the kubelet leaves out
// a missing one; notes say so, for the reason of a failed lookup. An API
// server that does not answer is a failure that may pass.
func (c *Config) keychain(ctx context.Context, namespace string, pod *corev1.Pod) (authn.Keychain, []string, error) {
	if len(pod.Spec.ImagePullSecrets) == 0 || c.Secrets == nil {
		return authn.DefaultKeychain, nil, nil
	}
	var secrets []corev1.Secret
	var notes []string
	for _, ref := range pod.Spec.ImagePullSecrets {
		s, err := c.Secrets(ctx, namespace, ref.Name)
		switch {
		case apierrors.IsNotFound(err):
			notes = append(notes, fmt.Sprintf("imagePullSecret %s/%s does not exist", namespace, ref.Name))
		case apierrors.IsForbidden(err):
			notes = append(notes, fmt.Sprintf("the webhook may not read imagePullSecret %s/%s: enable the namespace with manifests/webhook/enable-namespace.sh %s", namespace, ref.Name, namespace))
		case err != nil:
			return nil, nil, fail(reasonAPI, fmt.Errorf("read imagePullSecret %s/%s: %w", namespace, ref.Name, err))
		default:
			secrets = append(secrets, *s)
		}
	}
	k, err := resolve.KeychainFromSecrets(secrets)
	if err != nil {
		return nil, nil, fail(reasonImage, err)
	}
	return authn.NewMultiKeychain(k, authn.DefaultKeychain), notes, nil
}
