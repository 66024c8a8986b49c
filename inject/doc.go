// Package inject adds job-signal to a Pod template and takes it out again:
// the one transformation behind `kubectl job-signal inject` and the
// job-signal-webhook admission webhook.
//
// It is pure: the JSON of a Pod template and the ENTRYPOINT, CMD and
// STOPSIGNAL of the images it needs go in; the changes come out, as JSON
// Patch operations on that template (Op), with warnings. Prepare reads and
// decides once; Plan.Needs lists the images to look up, which is the
// caller's job; Plan.Inject completes the plan. So the same input always
// gives the same output, whichever front end calls it: the webhook sends
// the operations as its patch, the plugin applies them where the bytes of
// the manifest are.
//
// It produces one of two forms, chosen per Pod by PrepareFor from the mode
// the caller asks for and what is known of the cluster (docs/native.md):
// Kubernetes' native sidecars (each sidecar moved to initContainers with
// restartPolicy Always, and a startupProbe or preStop hook where its
// readiness or quit URL maps onto one; nothing of job-signal's in the
// Pod), or job-signal's pair, described next. Prepare always gives the
// pair.
//
// The pair's layout is the project's (two emptyDir volumes, the
// job-signal-install init container, the wrapped commands):
//
//   - volume job-signal (state, read-write for every wrapped container) and
//     volume job-signal-bin (the binaries, written only by the init
//     container and mounted read-only everywhere else);
//   - init container job-signal-install, first, running
//     `job-signal install /var/run/job-signal-bin`;
//   - the main container (see chooseMain) under job-signal and every other
//     container under sidecar-watch, with what their probes, their known
//     sidecar's arguments (KnownSidecars) and their image say, the original command line moved into args, following
//     Kubernetes' rule for command and args against the image's ENTRYPOINT
//     and CMD (see Effective).
//
// Choices come from annotations under job-signal.dev/ (see Annotations).
// Inject records what it changed in the annotation job-signal.dev/injected
// (for the native form: which containers it moved, from which index, and
// what it added to them), so that Uninject restores the original exactly,
// injecting again is a no-op unless the annotations changed, and injecting
// in another mode takes the old form out before putting the new one in.
package inject
