// Package webhook is job-signal-webhook: a mutating admission webhook that
// runs package inject on the Pods of Jobs as they are created.
//
// What it does with a Pod it cannot inject is decided in one place
// (verdict, policy.go): a Pod that needs job-signal is denied for now when
// the failure may pass (the Job controller creates it again), and
// admitted without job-signal, the reason recorded in the annotation
// job-signal.dev/skipped, a warning, a log line and the metrics, when it
// will not.
package webhook

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/resolve"
)

// SecretGetter reads a Secret through the API server (nil: the webhook
// has no API access, and pull secrets are not used).
type SecretGetter func(ctx context.Context, namespace, name string) (*corev1.Secret, error)

// Config is what the webhook needs.
type Config struct {
	Resolver        *resolve.Resolver
	Secrets         SecretGetter
	LimitRanges     LimitRangeLister
	RegistryTimeout time.Duration // bound on reading secrets and looking images up
	Installer       string        // image of the init container; empty: version.Image
	// FailurePolicy is PolicyFail (empty) or PolicyIgnore: what happens to
	// a Pod that needs job-signal when a failure that may pass keeps the
	// webhook from injecting it (see verdict). It matches the failurePolicy
	// of the webhook's configuration.
	FailurePolicy string
	// MaxInFlight bounds the admission requests answered at once; more get
	// a quick "busy" answer. 0: defaultMaxInFlight.
	MaxInFlight int
	// ClientCAFile, when set, makes the HTTPS listener (Listen) refuse
	// every request but /healthz without a client certificate signed by a
	// CA in this PEM file: only the API server, configured to present one,
	// may ask for admission.
	ClientCAFile string
	// Events records a Warning Event about the webhook's Pod (nil: none,
	// without API access or without --pod-name): the serving certificate
	// near its expiry.
	Events  func(ctx context.Context, reason, message string) error
	Log     *slog.Logger
	Metrics *Metrics // nil: NewMetrics()
	// Mode is the form the webhook gives Pods (empty: the pair); with
	// auto, the cluster WatchCluster last detected decides.
	Mode inject.Mode

	cluster atomic.Pointer[inject.Cluster] // WatchCluster's last good answer; nil: not known

	once     sync.Once
	inFlight atomic.Int64
	bodies   *budget // bytes of request bodies held
}

// setup fills in the defaults, once.
func (c *Config) setup() {
	c.once.Do(func() {
		if c.Log == nil {
			c.Log = slog.Default()
		}
		if c.Metrics == nil {
			c.Metrics = NewMetrics()
		}
		if c.Resolver == nil {
			c.Resolver = resolve.New(nil, 1024)
		}
		if c.Resolver.OnLookup == nil {
			c.Resolver.OnLookup = c.Metrics.Lookup
		}
		if c.MaxInFlight <= 0 {
			c.MaxInFlight = defaultMaxInFlight
		}
		c.bodies = newBudget(bodyBudget, c.Metrics.bodyBytes, c.Metrics.bodiesCut)
	})
}

// Decide says whether a Pod is one to inject and, when it is not, why
// (a reason class and a sentence). Pods of Jobs are injected (the
// namespaceSelector of the webhook configuration decides which
// namespaces send them), as are Pods labelled job-signal.dev/inject=enabled;
// the label "disabled" opts a Pod out. A Pod injected already (by the
// CLI, or by an earlier call when the API server reinvokes the webhook
// after another one added a container) goes through inject again: that
// changes nothing, or wraps the new container.
func Decide(pod *corev1.Pod) (bool, string, string) {
	switch {
	case pod.Labels[inject.LabelInject] == "disabled":
		return false, reasonOptedOut, "opted out by the label " + inject.LabelInject + "=disabled"
	case pod.Labels[inject.LabelInject] == "enabled":
		return true, "", ""
	}
	for _, o := range pod.OwnerReferences {
		if o.Kind == "Job" && o.APIVersion == "batch/v1" {
			return true, "", ""
		}
	}
	return false, reasonNotSelected, "not created by a Job and not labelled " + inject.LabelInject + "=enabled"
}

// Review answers one admission request, a Pod's or a Job's, and counts
// it.
func (c *Config) Review(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	return c.reviewDecoded(ctx, req, inject.Parsed{})
}

// reviewDecoded is Review of a request whose Pod was decoded already
// (inject.Parse of req.Object.Raw), or not yet (obj.Object nil).
func (c *Config) reviewDecoded(ctx context.Context, req *admissionv1.AdmissionRequest, obj inject.Parsed) *admissionv1.AdmissionResponse {
	c.setup()
	start := time.Now()
	var resp *admissionv1.AdmissionResponse
	var o outcome
	var class string
	if isJob(req) {
		resp, o, class = c.reviewJob(req)
	} else {
		resp, o, class = c.review(ctx, req, obj)
	}
	c.Metrics.admitted(o, class, time.Since(start))
	return resp
}

func (c *Config) review(ctx context.Context, req *admissionv1.AdmissionRequest, obj inject.Parsed) (resp *admissionv1.AdmissionResponse, o outcome, class string) {
	resp = &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	// Every line says which request (and, once read, which Pod) it is
	// about. The attributes go with each line rather than into a logger
	// (slog's With formats them at once, for every request, whether a line
	// follows or not); log is one with them, for the rarer lines.
	who := []any{"uid", string(req.UID), "namespace", req.Namespace, "name", req.Name}
	with := func(args ...any) []any { return append(who[:len(who):len(who)], args...) }
	log := func() *slog.Logger { return c.Log.With(who...) }
	var pod *corev1.Pod
	defer func() {
		if p := recover(); p != nil {
			log().Error("panic while reviewing a Pod", "panic", p, "stack", string(debug.Stack()))
			resp, o, class = c.answer(req.UID, nil, pod, fail(reasonInternal, fmt.Errorf("job-signal-webhook failed: %v", p)), log())
		}
	}()
	if req.Kind.Kind != "Pod" || req.Kind.Group != "" || req.Operation != admissionv1.Create {
		return resp, unchanged, reasonNotPod
	}
	pod, obj, err := readPod(req.Object.Raw, obj)
	if err != nil {
		return c.answer(req.UID, nil, nil, fail(reasonUnreadable, fmt.Errorf("cannot read the Pod: %w", err)), log())
	}
	if ok, class, why := Decide(pod); !ok {
		c.Log.Debug("not injected", with("reason", why)...)
		return resp, unchanged, class
	}
	if !needsJobSignal(pod) { // the rule the registration and the busy path apply
		c.Log.Debug("not injected", with("reason", "one container, or restartPolicy Always: it cannot need job-signal")...)
		return resp, unchanged, reasonNothingToDo
	}
	who = with("pod", cmp.Or(pod.Name, pod.GenerateName+"*"))
	if inject.HandWired(&pod.Spec, pod.Annotations) {
		c.Log.Info("left as it is: job-signal was added to it by hand", who...)
		return resp, unchanged, reasonHandWired
	}
	m, nothing, err := c.mutate(ctx, req.Namespace, req.Object.Raw, obj, pod)
	switch {
	case err != nil:
		return c.answer(req.UID, req.Object.Raw, pod, err, log())
	case nothing != "":
		c.Log.Debug("not injected", with("reason", nothing)...)
		return resp, unchanged, reasonNothingToDo
	}
	if len(m.ops) == 0 { // injected already: the API server's second call, after other admission plugins
		c.Log.Debug("injected", with("warnings", len(m.warnings), "changes", 0)...)
	} else {
		c.Log.Info("injected", with("form", string(m.form), "reason", oneLine(m.why, maxReason), "class", string(m.class), "warnings", len(m.warnings))...)
		c.Metrics.injectedForm(m.form, m.class)
	}
	for _, w := range m.warnings {
		resp.Warnings = append(resp.Warnings, oneLine("job-signal: "+w, maxReason))
	}
	if err := setPatch(resp, m.ops); err != nil {
		log().Error("the patch could not be written", "err", err)
	}
	return resp, injected, reasonNone
}

// answer is the response for a Pod that could not be injected: denied or
// admitted without job-signal, as verdict decides. raw and pod, when
// known, let the reason be recorded in the Pod.
func (c *Config) answer(uid types.UID, raw []byte, pod *corev1.Pod, err error, log *slog.Logger) (*admissionv1.AdmissionResponse, outcome, string) {
	f := failureOf(err)
	reason := oneLine(f.Error(), maxReason)
	if verdict(pod != nil && needsJobSignal(pod), f.temporary(), c.FailurePolicy) == denied {
		log.Warn("denied for now: the Job controller creates the Pod again", "class", string(f.class), "reason", reason)
		code, status := int32(503), metav1.StatusReasonServiceUnavailable
		if f.class == reasonBusy {
			code, status = 429, metav1.StatusReasonTooManyRequests
		}
		return &admissionv1.AdmissionResponse{UID: uid, Allowed: false, Result: &metav1.Status{
			Status: metav1.StatusFailure, Code: code, Reason: status,
			Message: oneLine("job-signal cannot inject this Pod yet, so it is not created now (the Job controller tries again): "+reason, maxReason),
		}}, denied, f.class
	}
	log.Warn("admitted without job-signal", "class", string(f.class), "reason", reason)
	resp := &admissionv1.AdmissionResponse{UID: uid, Allowed: true,
		Warnings: []string{oneLine("job-signal-webhook: Pod admitted without job-signal: "+reason, maxReason)}}
	if raw != nil && pod != nil {
		if annotationsSize(pod.Annotations)+len(inject.AnnotationSkipped)+len(reason) > totalAnnotationLimit {
			log.Warn("the reason is not recorded in the Pod: its annotations are at the API server's limit")
		} else {
			if err := setPatch(resp, inject.AnnotateOps(raw, inject.AnnotationSkipped, reason)); err != nil {
				log.Error("the patch could not be written", "err", err)
			}
		}
	}
	return resp, skipped, f.class
}

// setPatch sets patch as resp's, or says why it could not be written.
func setPatch(resp *admissionv1.AdmissionResponse, patch []inject.Op) error {
	if len(patch) == 0 {
		return nil
	}
	raw, err := inject.Patch(patch)
	if err != nil {
		return err
	}
	pt := admissionv1.PatchTypeJSONPatch
	resp.Patch, resp.PatchType = raw, &pt
	return nil
}
