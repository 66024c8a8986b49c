// Package webhook is job-signal-webhook: a mutating admission webhook that
// runs package inject on the Pods of Jobs as they are created. It never
// blocks a Pod: when it cannot inject one, it admits it unchanged and says
// why in the annotation job-signal.dev/skipped, a warning and a log line.
package webhook

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	kjson "sigs.k8s.io/json"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/resolve"
	"github.com/job-signal/job-signal/internal/version"
)

// SecretGetter reads a Secret through the API server (nil: the webhook
// has no API access, and pull secrets are not used).
type SecretGetter func(ctx context.Context, namespace, name string) (*corev1.Secret, error)

// Config is what the webhook needs.
type Config struct {
	Resolver        *resolve.Resolver
	Secrets         SecretGetter
	RegistryTimeout time.Duration // bound on reading secrets and looking images up
	Installer       string        // image of the init container; empty: version.Image
	Log             *slog.Logger
}

// Decide says whether a Pod is one to inject and, when it is not, why.
// Pods of Jobs are injected (the namespaceSelector of the webhook
// configuration decides which namespaces send them), as are Pods labelled
// job-signal.dev/inject=enabled; the label "disabled" opts a Pod out. A
// Pod injected already (by the CLI, or by an earlier call when the API
// server reinvokes the webhook after another one added a container) goes
// through inject again: that changes nothing, or wraps the new container.
func Decide(pod *corev1.Pod) (bool, string) {
	switch {
	case pod.Labels[inject.LabelInject] == "disabled":
		return false, "opted out by the label " + inject.LabelInject + "=disabled"
	case pod.Labels[inject.LabelInject] == "enabled":
		return true, ""
	}
	for _, o := range pod.OwnerReferences {
		if o.Kind == "Job" && o.APIVersion == "batch/v1" {
			return true, ""
		}
	}
	return false, "not created by a Job and not labelled " + inject.LabelInject + "=enabled"
}

// Review answers one admission request. It always allows the Pod: a Pod
// it cannot inject gets only the job-signal.dev/skipped annotation.
func (c *Config) Review(ctx context.Context, req *admissionv1.AdmissionRequest) (resp *admissionv1.AdmissionResponse) {
	resp = &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	log := c.Log.With("uid", req.UID, "namespace", req.Namespace, "name", req.Name)
	defer func() {
		if p := recover(); p != nil {
			log.Error("panic while reviewing a Pod; admitted unchanged", "panic", p)
			resp = &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true, Warnings: []string{fmt.Sprintf("job-signal-webhook: internal error, Pod admitted unchanged: %v", p)}}
		}
	}()
	if req.Kind.Kind != "Pod" || req.Kind.Group != "" || req.Operation != admissionv1.Create {
		return resp
	}
	var pod corev1.Pod
	if err := json.Unmarshal(req.Object.Raw, &pod); err != nil {
		log.Warn("admitted unchanged: the object is not a Pod this webhook can read", "err", err)
		resp.Warnings = []string{"job-signal-webhook: Pod admitted unchanged: cannot read it: " + err.Error()}
		return resp
	}
	if ok, why := Decide(&pod); !ok {
		log.Debug("not injected", "reason", why)
		return resp
	}
	name := pod.Name
	if name == "" {
		name = pod.GenerateName + "*"
	}
	log = log.With("pod", name)
	patch, warnings, err := c.mutate(ctx, req.Namespace, req.Object.Raw, &pod)
	if err != nil {
		reason := err.Error()
		log.Warn("admitted unchanged", "reason", reason)
		resp.Warnings = []string{"job-signal-webhook: Pod admitted without job-signal: " + reason}
		patch = skipPatch(req.Object.Raw, reason)
	} else {
		log.Info("injected", "warnings", len(warnings))
	}
	for _, w := range warnings {
		resp.Warnings = append(resp.Warnings, "job-signal: "+w)
	}
	if len(patch) == 0 {
		return resp
	}
	raw, err := inject.Patch(patch)
	if err != nil {
		log.Error("admitted unchanged: could not write the patch", "err", err)
		return resp
	}
	pt := admissionv1.PatchTypeJSONPatch
	resp.Patch, resp.PatchType = raw, &pt
	return resp
}

// mutate injects pod (raw, as the API server sent it) and returns the
// changes, decided once by inject, as JSON Patch operations on raw.
func (c *Config) mutate(ctx context.Context, namespace string, raw []byte, pod *corev1.Pod) ([]inject.Op, []string, error) {
	plan, err := inject.Prepare(raw)
	if err != nil {
		return nil, nil, err
	}
	var images map[string]inject.ImageConfig
	if needs := plan.Needs(); len(needs) > 0 {
		ctx, cancel := resolve.Timeout(ctx, c.RegistryTimeout)
		defer cancel()
		keychain, err := c.keychain(ctx, namespace, pod)
		if err != nil {
			return nil, nil, err
		}
		platform := resolve.Platform{OS: "linux", Architecture: pod.Spec.NodeSelector[corev1.LabelArchStable]}
		images, err = c.Resolver.Resolve(ctx, needs, keychain, platform)
		if err != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, nil, fmt.Errorf("the registry did not answer within %s: %w", c.RegistryTimeout, err)
			}
			return nil, nil, err
		}
	}
	res, err := plan.Inject(images, cmp.Or(c.Installer, version.Image))
	return res.Ops, res.Warnings, err
}

// keychain is the Pod's pull secrets, then the webhook's own Docker config.
func (c *Config) keychain(ctx context.Context, namespace string, pod *corev1.Pod) (authn.Keychain, error) {
	if len(pod.Spec.ImagePullSecrets) == 0 || c.Secrets == nil {
		return authn.DefaultKeychain, nil
	}
	var secrets []corev1.Secret
	for _, ref := range pod.Spec.ImagePullSecrets {
		s, err := c.Secrets(ctx, namespace, ref.Name)
		if err != nil {
			return nil, fmt.Errorf("read imagePullSecret %s/%s: %w", namespace, ref.Name, err)
		}
		secrets = append(secrets, *s)
	}
	k, err := resolve.KeychainFromSecrets(secrets)
	if err != nil {
		return nil, err
	}
	return authn.NewMultiKeychain(k, authn.DefaultKeychain), nil
}

// skipPatch only records why the Pod was not injected, creating metadata
// or its annotations when raw lacks them.
func skipPatch(raw []byte, reason string) []inject.Op {
	var pod struct {
		Metadata *struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	switch kjson.UnmarshalCaseSensitivePreserveInts(raw, &pod); {
	case pod.Metadata == nil:
		return []inject.Op{{Op: "add", Path: "/metadata", Value: map[string]any{"annotations": map[string]string{inject.AnnotationSkipped: reason}}}}
	case pod.Metadata.Annotations == nil:
		return []inject.Op{{Op: "add", Path: "/metadata/annotations", Value: map[string]string{inject.AnnotationSkipped: reason}}}
	}
	return []inject.Op{{Op: "add", Path: inject.Pointer("metadata", "annotations", inject.AnnotationSkipped), Value: reason}}
}
