package inject

import (
	"fmt"
	"time"
)

// sidecar-watch's defaults that the budget depends on (a test checks them
// against sidecar-watch's flags).
const (
	DefaultGrace            = 10 * time.Second
	DefaultStopAfterTimeout = 30 * time.Second
	// defaultTerminationGrace is Kubernetes' terminationGracePeriodSeconds
	// when the Pod does not set it.
	defaultTerminationGrace = 30 * time.Second
)

// StopBudget is the longest a sidecar may take to stop once the Pod is
// deleted, as README explains: --grace waiting for the job, --grace after
// --quit-url (if any), --grace after --stop-signal, plus the time its
// --stop-after sidecars take to stop (at most --stop-after-timeout).
// grace and quit say, per sidecar, its --grace and whether it has a quit
// URL; stopAfter its --stop-after list. The order must have no cycle.
func StopBudget(name string, grace map[string]time.Duration, quit map[string]bool, stopAfter map[string][]string) time.Duration {
	memo := map[string]time.Duration{}
	var stopping func(string) time.Duration
	// stopping is the time from "the job is done" to "name has exited".
	stopping = func(n string) time.Duration {
		if d, ok := memo[n]; ok {
			return d
		}
		var wait time.Duration
		for _, m := range stopAfter[n] {
			wait = max(wait, stopping(m))
		}
		d := min(wait, DefaultStopAfterTimeout) + grace[n]
		if quit[n] {
			d += grace[n]
		}
		memo[n] = d
		return d
	}
	return grace[name] + stopping(name)
}

// budgetWarnings warns when a sidecar's stop budget exceeds the Pod's
// terminationGracePeriodSeconds: the kubelet's SIGKILL would come first.
func budgetWarnings(terminationGrace *int64, sidecars []string, grace map[string]time.Duration, quit map[string]bool, stopAfter map[string][]string) []string {
	limit := defaultTerminationGrace
	if terminationGrace != nil {
		limit = time.Duration(*terminationGrace) * time.Second
	}
	var worst string
	var budget time.Duration
	for _, name := range sidecars {
		if b := StopBudget(name, grace, quit, stopAfter); b > budget {
			worst, budget = name, b
		}
	}
	if budget <= limit {
		return nil
	}
	return []string{fmt.Sprintf("sidecar %q may take up to %s to stop when the Pod is deleted (--grace waiting for the job, after --quit-url, after the stop signal, and its --stop-after sidecars), more than terminationGracePeriodSeconds (%s): the kubelet's SIGKILL may come first; raise spec.terminationGracePeriodSeconds or lower %sgrace",
		worst, budget, limit, Prefix)}
}
