// Package soak is a randomized fault-injection soak of job-signal and
// sidecar-watch: many lifecycles of a job and its sidecars, real processes,
// faults injected, every outcome checked. Its test files build only with
// the "soak" tag, so that it stays out of the default test run. See
// README.md.
package soak
