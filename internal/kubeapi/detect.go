package kubeapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/job-signal/job-signal/inject"
	jsversion "github.com/job-signal/job-signal/internal/version"
)

// DetectTimeout bounds one Detect: two small requests to the API server.
const DetectTimeout = 10 * time.Second

// maxDetectAnswer bounds each answer Detect reads: a version is a few
// hundred bytes, the dry-run Pod a few KiB (more if other webhooks add
// to it).
const maxDetectAnswer = 1 << 20

// DetectContainer is the name of the dry-run Pod's init container, which
// Detect looks for in the answer (other webhooks may add their own).
const DetectContainer = "detect-sidecar"

// Detect asks the API server what the cluster offers job-signal: its
// version, and whether it keeps an init container's restartPolicy
// Always (native sidecars), by a server-side dry run of such a Pod in
// namespace. Where the feature is off (before Kubernetes 1.29, or the
// SidecarContainers gate off) the API server drops the field silently,
// so the version alone cannot tell; the dry run stores nothing.
// It gives up after DetectTimeout, or ctx's deadline if sooner.
func Detect(ctx context.Context, config *rest.Config, namespace string) (inject.Cluster, error) {
	if namespace == "" {
		return inject.Cluster{}, errors.New("detect: no namespace to ask in")
	}
	ctx, cancel := context.WithTimeout(ctx, DetectTimeout)
	defer cancel()
	client, err := CoreClient(Bounded(config, maxDetectAnswer))
	if err != nil {
		return inject.Cluster{}, fmt.Errorf("detect: %w", err)
	}
	var v version.Info
	body, err := client.Get().AbsPath("/version").DoRaw(ctx)
	if err == nil {
		err = json.Unmarshal(body, &v)
	}
	if err != nil {
		return inject.Cluster{}, fmt.Errorf("read the API server's version: %w", err)
	}
	got := &corev1.Pod{}
	err = client.Post().Namespace(namespace).Resource("pods").
		Param("dryRun", metav1.DryRunAll).Param("fieldValidation", "Ignore").
		Body(DetectPod(namespace)).Do(ctx).Into(got)
	if err != nil {
		if apierrors.IsForbidden(err) {
			err = fmt.Errorf("%w (it needs create on pods in %s, for a dry run that stores nothing: the chart's Role gives it)", err, namespace)
		}
		return inject.Cluster{}, fmt.Errorf("ask the API server whether it keeps a native sidecar (a dry-run Pod in namespace %s): %w", namespace, err)
	}
	native, err := keptNativeSidecar(got)
	if err != nil {
		return inject.Cluster{}, fmt.Errorf("the API server's answer to a dry-run Pod in namespace %s: %w", namespace, err)
	}
	return inject.Cluster{Known: true, NativeSidecars: native, Version: v.GitVersion}, nil
}

// DetectPod is the Pod Detect asks the API server to create in a dry
// run: one main container and one native sidecar (an init container with
// restartPolicy Always). It is labelled job-signal.dev/inject=disabled,
// has one container and no owner, so job-signal's webhook is never sent
// it; it meets the restricted Pod Security Standard, so a namespace that
// enforces it admits it; nothing of it runs or is stored.
func DetectPod(namespace string) *corev1.Pod {
	security := &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		RunAsNonRoot:             ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	container := func(name string, restart *corev1.ContainerRestartPolicy) corev1.Container {
		return corev1.Container{Name: name, Image: jsversion.Image, RestartPolicy: restart, SecurityContext: security}
	}
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{GenerateName: "job-signal-detect-", Namespace: namespace,
			Labels: map[string]string{inject.LabelInject: "disabled"}},
		Spec: corev1.PodSpec{
			RestartPolicy:                corev1.RestartPolicyNever,
			AutomountServiceAccountToken: ptr.To(false),
			InitContainers:               []corev1.Container{container(DetectContainer, ptr.To(corev1.ContainerRestartPolicyAlways))},
			Containers:                   []corev1.Container{container("main", nil)},
		},
	}
}

// keptNativeSidecar reads the answer to DetectPod: native sidecars iff
// its init container kept restartPolicy Always.
func keptNativeSidecar(pod *corev1.Pod) (bool, error) {
	for _, c := range pod.Spec.InitContainers {
		if c.Name == DetectContainer {
			return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways, nil
		}
	}
	return false, fmt.Errorf("init container %s is missing", DetectContainer)
}
