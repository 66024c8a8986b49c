// Package inject adds job-signal to a Pod template and takes it out again:
// the one transformation behind `kubectl job-signal inject` and the
// job-signal-webhook admission webhook.
//
// It is pure: a PodSpec, its annotations and the ENTRYPOINT/CMD of the
// images it needs go in; the injected PodSpec, its annotations and warnings
// come out. Looking images up in a registry is the caller's job (see
// Needs), so the same input always gives the same output, whichever front
// end calls it.
//
// The layout it produces is the project's (two emptyDir volumes, the
// job-signal-install init container, the wrapped commands):
//
//   - volume job-signal (state, read-write for every wrapped container) and
//     volume job-signal-bin (the binaries, written only by the init
//     container and mounted read-only everywhere else);
//   - init container job-signal-install, first, running
//     `job-signal install /var/run/job-signal-bin`;
//   - the main container under job-signal and every other container under
//     sidecar-watch, the original command line moved into args, following
//     Kubernetes' rule for command and args against the image's ENTRYPOINT
//     and CMD (see Effective).
//
// Choices come from annotations under job-signal.dev/ (see Annotations).
// Inject records what it changed in the annotation job-signal.dev/injected,
// so that Uninject restores the original exactly and injecting again is a
// no-op unless the annotations changed.
package inject
