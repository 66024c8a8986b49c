package webhook

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

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
	if err := inject.CheckAnnotations(pod.Annotations, ops); err != nil {
		return nil, nil, "", fail(reasonAnnotations, err)
	}
	return ops, res.Warnings, "", nil
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
