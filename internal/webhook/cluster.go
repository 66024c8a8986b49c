package webhook

import (
	"context"
	"time"

	"github.com/job-signal/job-signal/inject"
)

// DetectFunc asks the API server what the cluster offers (kubeapi.Detect,
// bound to the webhook's API access and namespace).
type DetectFunc func(context.Context) (inject.Cluster, error)

// firstRetry is how soon a check is tried again while the cluster has
// never been known (auto gives the pair until then); it doubles up to
// the check interval.
const firstRetry = 5 * time.Second

// nextCheck is how long to wait before the next check: the interval once
// the cluster is known (a failed re-check keeps the last good answer),
// sooner while it never was, doubling from firstRetry after each failure.
func nextCheck(known bool, failures int, interval time.Duration) time.Duration {
	if known || failures <= 0 {
		return interval
	}
	wait := firstRetry
	for i := 1; i < failures && wait < interval; i++ {
		wait *= 2
	}
	return min(wait, interval)
}

// target is how the webhook wants each Pod's form chosen now: its mode,
// and the cluster as last detected (not known before the first answer).
func (c *Config) target() inject.Target {
	t := inject.Target{Mode: c.Mode}
	if t.Mode == "" {
		t.Mode = inject.ModePair
	}
	if cl := c.cluster.Load(); cl != nil {
		t.Cluster = *cl
	}
	return t
}

// WatchCluster is the one loop that owns what the webhook knows of its
// cluster: it checks at once, then every interval, until ctx ends. A
// good answer replaces the last; a failed check keeps it, and is logged
// and counted. Admissions read the answer (target) without waiting.
func (c *Config) WatchCluster(ctx context.Context, detect DetectFunc, interval time.Duration) {
	c.setup()
	failures := 0
	var last *inject.Cluster
	for {
		cl, err := detect(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			failures++
			c.Metrics.clusterCheck(false)
			if last != nil {
				c.Log.Warn("could not check the cluster again: keeping its last answer", "err", err,
					"nativeSidecars", last.NativeSidecars, "kubeVersion", last.Version)
			} else {
				c.Log.Warn("could not check the cluster: until it answers, mode auto gives the pair", "err", err,
					"mode", c.target().Mode, "retryIn", nextCheck(false, failures, interval))
			}
		} else {
			failures = 0
			c.Metrics.clusterCheck(true)
			c.Metrics.setCluster(cl)
			if last == nil || *last != cl {
				c.logCluster(cl)
			}
			last = &cl
			c.cluster.Store(&cl)
		}
		wait := time.NewTimer(nextCheck(last != nil, failures, interval))
		select {
		case <-ctx.Done():
			wait.Stop()
			return
		case <-wait.C:
		}
	}
}

// logCluster says what a new answer means for the Pods to come.
func (c *Config) logCluster(cl inject.Cluster) {
	mode := c.target().Mode
	switch {
	case mode == inject.ModeNative && !cl.NativeSidecars:
		c.Log.Error("mode native, but the API server drops native sidecars: their Pods would never start; use mode auto or pair",
			"kubeVersion", cl.Version, "nativeSidecars", false)
	default:
		c.Log.Info("cluster checked", "kubeVersion", cl.Version, "nativeSidecars", cl.NativeSidecars, "mode", mode)
	}
}
