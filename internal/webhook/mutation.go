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

// mutated is what mutate decided for a Pod that needs job-signal: the
// changes, as JSON Patch operations on the Pod as the API server sent
// it, warnings for the user, and the form chosen and why.
type mutated struct {
	ops      []inject.Op
	warnings []string
	form     inject.Form
	why      string // a sentence: the log line's and the record's
	class    string // a bounded class of why: the metrics' label (formClass)
}

// mutate injects pod (raw, as the API server sent it, and obj, raw as
// inject.Parse decoded it) in the form the webhook's mode and cluster
// choose (target), decided once by inject; or says why the Pod needs
// nothing; or fails saying why it cannot.
func (c *Config) mutate(ctx context.Context, namespace string, raw []byte, obj inject.Parsed, pod *corev1.Pod) (m mutated, nothing string, err error) {
	plan, err := inject.PrepareParsedFor(raw, obj, c.target())
	if errors.Is(err, inject.ErrNotNative) {
		return m, "", fail(reasonNotNative, err)
	}
	if err != nil {
		return m, "", fail(reasonRefused, err)
	}
	if why := plan.Nothing(); why != "" {
		return m, why, nil
	}
	var images map[string]inject.ImageConfig
	if needs := plan.Needs(); len(needs) > 0 {
		ctx, cancel := resolve.Timeout(ctx, c.RegistryTimeout)
		defer cancel()
		keychain, notes, err := c.keychain(ctx, namespace, pod)
		if err != nil {
			return m, "", err
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
				return m, "", fail(reasonRegistry, err)
			}
			return m, "", fail(reasonImage, err)
		}
	}
	res, err := plan.Inject(images, cmp.Or(c.Installer, version.Image))
	if errors.Is(err, inject.ErrNotNative) {
		return m, "", fail(reasonNotNative, err)
	}
	if err != nil {
		return m, "", fail(reasonRefused, err)
	}
	m = mutated{ops: res.Ops, warnings: res.Warnings, form: res.Form, why: res.Reason, class: formClass(res)}
	if m.form == "" && len(m.ops) > 0 {
		m.form = inject.FormPair // an inject that does not name its form makes the pair
	}
	// Only the pair adds a container (job-signal's install container) for
	// the namespace's LimitRanges to fit: native sidecars are the Pod's own.
	if c.LimitRanges != nil && len(m.ops) > 0 && m.form == inject.FormPair {
		ranges, err := c.LimitRanges(namespace)
		if err != nil {
			return mutated{}, "", fail(reasonAPI, fmt.Errorf("read the LimitRanges of namespace %s: %w", namespace, err))
		}
		if m.ops, err = fitOps(raw, m.ops, ranges); err != nil {
			return mutated{}, "", fail(reasonLimitRange, err)
		}
	}
	if err := inject.CheckAnnotations(pod.Annotations, m.ops); err != nil {
		return mutated{}, "", fail(reasonAnnotations, err)
	}
	return m, "", nil
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

// formUnclassified is the class of a form's reason that inject has not
// classed.
const formUnclassified = "unclassified"

// formClass is the bounded class of why inject gave a Pod its form, the
// label of job_signal_webhook_injected_pods_total beside the form; the
// sentence (res.Reason) goes to the log and the Pod's record. inject
// decides the class with the form, once: until its Result carries one,
// every reason is unclassified.
func formClass(res inject.Result) string {
	return formUnclassified
}
