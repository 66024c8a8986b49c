package webhook

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/resolve"
	"github.com/job-signal/job-signal/internal/version"
)

// mutate injects pod and returns the patch that does it, or a failure
// saying why it cannot.
func (c *Config) mutate(ctx context.Context, namespace string, raw []byte, pod *corev1.Pod) ([]Operation, []string, error) {
	needs, err := inject.Needs(pod.Spec, pod.Annotations)
	if err != nil {
		return nil, nil, fail(reasonRefused, false, err)
	}
	var images map[string]inject.ImageConfig
	if len(needs) > 0 {
		ctx, cancel := resolve.Timeout(ctx, c.RegistryTimeout)
		defer cancel()
		keychain, notes, err := c.keychain(ctx, namespace, pod)
		if err != nil {
			return nil, nil, err
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
				return nil, nil, fail(reasonRegistry, true, err)
			}
			return nil, nil, fail(reasonImage, false, err)
		}
	}
	res, err := inject.Inject(inject.Input{Spec: pod.Spec, Annotations: pod.Annotations, Images: images, Installer: cmp.Or(c.Installer, version.Image)})
	if err != nil {
		return nil, nil, fail(reasonRefused, false, err)
	}
	after := pod.DeepCopy()
	after.Spec, after.Annotations = res.Spec, res.Annotations
	if inject.Injected(pod.Annotations) {
		keepLayout(&pod.Spec, &after.Spec)
	}
	if c.LimitRanges != nil {
		ranges, err := c.LimitRanges(namespace)
		if err != nil {
			return nil, nil, fail(reasonAPI, true, fmt.Errorf("read the LimitRanges of namespace %s: %w", namespace, err))
		}
		if err := fitLimitRanges(pod, after, ranges); err != nil {
			return nil, nil, fail(reasonLimitRange, false, err)
		}
	}
	if size := annotationsSize(after.Annotations); size > totalAnnotationLimit {
		return nil, nil, fail(reasonAnnotations, false, fmt.Errorf("with job-signal's record (%s) the Pod's annotations would take %d bytes, over the API server's limit of %d",
			inject.AnnotationInjected, size, totalAnnotationLimit))
	}
	patch, err := podPatch(raw, pod, after)
	if err != nil {
		return nil, nil, fail(reasonUnreadable, false, fmt.Errorf("cannot write the patch for this Pod: %w", err))
	}
	return patch, res.Warnings, nil
}

// keepLayout leaves the init containers and volumes of a Pod injected
// before (by the plugin, or by this webhook's first call) as they are:
// Inject only adds to them, and rebuilds its additions from scratch. On a
// second call, when the API server reinvokes the webhook (policy IfNeeded),
// other admission plugins have changed those additions since: the
// ServiceAccount admission, run again, mounts the API token into the
// install container (which is why the API server calls again at all), an
// image-mirroring webhook may have renamed its image. Rebuilding would
// undo that. The containers still go through Inject: one added since (a
// mesh's sidecar) gets wrapped.
func keepLayout(before, after *corev1.PodSpec) {
	after.InitContainers, after.Volumes = before.InitContainers, before.Volumes
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
			return nil, nil, fail(reasonAPI, true, fmt.Errorf("read imagePullSecret %s/%s: %w", namespace, ref.Name, err))
		default:
			secrets = append(secrets, *s)
		}
	}
	k, err := resolve.KeychainFromSecrets(secrets)
	if err != nil {
		return nil, nil, fail(reasonImage, false, err)
	}
	return authn.NewMultiKeychain(k, authn.DefaultKeychain), notes, nil
}

// podPatch is the patch from before to after, fitted to raw (before as
// the API server sent it); only the parts injection changes are compared
// when nothing else changed (projection.go).
func podPatch(raw []byte, before, after *corev1.Pod) ([]Operation, error) {
	var from, to any = before, after
	projected := onlyProjected(before, after)
	if projected {
		from, to = projectionOf(before), projectionOf(after)
	}
	old, err := json.Marshal(from)
	if err != nil {
		return nil, err
	}
	new, err := json.Marshal(to)
	if err != nil {
		return nil, err
	}
	ops, err := Diff(old, new)
	if err != nil {
		return nil, err
	}
	if !projected {
		return Anchor(raw, ops)
	}
	doc, err := projectedRaw(raw)
	if err != nil {
		return nil, err
	}
	return anchorIn(doc, ops), nil
}

// skipPatch only records why the Pod was not injected.
func skipPatch(raw []byte, pod *corev1.Pod, reason string) []Operation {
	after := pod.DeepCopy()
	after.Annotations = maps.Clone(pod.Annotations)
	if after.Annotations == nil {
		after.Annotations = map[string]string{}
	}
	after.Annotations[inject.AnnotationSkipped] = reason
	patch, err := podPatch(raw, pod, after)
	if err != nil {
		return nil
	}
	return patch
}
