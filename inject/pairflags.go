package inject

import (
	"fmt"
	"strings"
	"time"
)

// mainFlags are job-signal's flags.
func (p *plan) mainFlags() []string {
	var flags []string
	waitFor := p.sidecars
	if p.s.hasWaitFor {
		waitFor = p.s.waitFor
	}
	if len(waitFor) > 0 {
		flags = append(flags, "--wait-for", strings.Join(waitFor, ","))
	}
	if v, ok := p.s.main1["ready-timeout"]; ok {
		flags = append(flags, "--ready-timeout", v)
	}
	return append(flags, p.restart...)
}

// sidecarValues are a sidecar's settings by annotation key: its own
// annotations, then the Pod-wide ones, then what its probes, its known
// sidecar's row (read against line, its full command line) and its
// image's STOPSIGNAL say.
func (p *plan) sidecarValues(name string, line []string, stopSignal string) (map[string]string, []string) {
	c := container(p.spec, name)
	values := map[string]string{}
	for _, o := range Options {
		if o.Main {
			continue
		}
		if v, ok := p.s.sidecar[name][o.Key]; ok {
			values[o.Key] = v
		} else if v, ok := p.s.podWide[o.Key]; ok {
			values[o.Key] = v
		}
	}
	k := p.known[name]
	if !hasReadiness(values) {
		if d := p.probes[name]; d != nil {
			values[d.key] = d.value
		} else if k != nil {
			if url := fromTable(k.Ready, line, c.Env); url != "" {
				values["ready-http"] = url
			}
		}
	}
	if _, ok := values["quit-url"]; !ok && k != nil {
		if url := fromTable(k.Quit, line, c.Env); url != "" {
			values["quit-url"] = url
		}
	}
	var warnings []string
	if _, ok := values["stop-signal"]; !ok {
		sig, warning := stopSignalOf(name, stopSignal, k)
		if sig != "" {
			values["stop-signal"] = sig
		}
		if warning != "" {
			warnings = append(warnings, warning)
		}
	}
	return values, warnings
}

// sidecarFlags writes a sidecar's values as sidecar-watch's flags, in the
// order of Options.
func sidecarFlags(name string, values map[string]string) []string {
	flags := []string{"--name", name}
	for _, o := range Options {
		if v, ok := values[o.Key]; ok && !o.Main {
			flags = append(flags, o.Flag, v)
		}
	}
	return flags
}

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
