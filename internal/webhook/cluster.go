package webhook

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/job-signal/job-signal/inject"
)

// ClusterSource is what the webhook reads of its cluster: the API
// server's version, asked at every check, and the Nodes, kept current by
// a watch (kubeapi.NodeInformer, through informerNodes).
type ClusterSource struct {
	Version func(context.Context) (string, error)
	Nodes   NodeSource
}

// NodeSource is the Nodes as a watch keeps them.
type NodeSource interface {
	// Run watches until ctx ends.
	Run(ctx context.Context)
	// List is every Node now, and whether the first list is done.
	List() (nodes []inject.Node, synced bool)
	// Changed receives after a Node joined, left or changed its kubelet
	// version; several changes may come as one.
	Changed() <-chan struct{}
	// Errors receives why a list or watch of the Nodes failed; the watch
	// tries again by itself.
	Errors() <-chan error
}

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
// cluster: the API server's version, checked at once and then every
// interval (a failed check keeps the last good one, and is logged and
// counted), and the Nodes' kubelet versions, as the watch of src.Nodes
// delivers them. Once both are known, inject.ClusterFrom decides what
// the cluster offers; each new answer is stored for the admissions to
// read (target) without waiting, logged and shown in the metrics, with a
// line for each Node that begins or stops holding native sidecars back.
// It runs the Node watch, and ends with ctx.
func (c *Config) WatchCluster(ctx context.Context, src ClusterSource, interval time.Duration) {
	c.setup()
	go src.Nodes.Run(ctx)
	var (
		version  string // the last good answer; "" before the first
		failures int
		held     map[string]string // the Nodes holding native sidecars back, by name: their kubelet versions
		synced   bool
	)
	check := time.NewTimer(0)
	defer check.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-check.C:
			v, err := src.Version(ctx)
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				failures++
				c.Metrics.clusterCheck(false)
				if version != "" {
					c.Log.Warn("could not check the API server's version again: keeping its last answer", "err", err, "kubeVersion", version)
				} else {
					c.Log.Warn("could not check the cluster: until it answers, mode auto gives the pair", "err", err,
						"mode", c.target().Mode, "retryIn", nextCheck(false, failures, interval))
				}
			} else {
				failures = 0
				c.Metrics.clusterCheck(true)
				version = v
			}
			check.Reset(nextCheck(version != "", failures, interval))
		case <-src.Nodes.Changed():
		case err := <-src.Nodes.Errors():
			c.Metrics.clusterCheck(false)
			if synced {
				c.Log.Warn("could not watch the Nodes: keeping what was last read of them (the watch tries again)", "err", err)
			} else {
				c.Log.Warn("could not list the Nodes: until they are read, mode auto gives the pair (the watch tries again)", "err", err,
					"mode", c.target().Mode)
			}
			continue
		}
		var nodes []inject.Node
		if nodes, synced = src.Nodes.List(); version == "" || !synced {
			continue
		}
		cl := inject.ClusterFrom(version, nodes)
		last := c.cluster.Load() // stored by this loop alone
		changed := last == nil || *last != cl
		if changed { // first, so that what is logged next is what admissions read
			c.cluster.Store(&cl)
		}
		now := heldBack(version, nodes)
		c.logNodes(heldBackChanges(held, now), now)
		held = now
		c.Metrics.setCluster(cl)
		if changed {
			c.logCluster(cl)
		}
	}
}

// heldBack is the Nodes whose kubelets hold native sidecars back, as
// inject.ClusterFrom judges each one beside the API server's version, by
// name: their kubelet versions.
func heldBack(server string, nodes []inject.Node) map[string]string {
	out := map[string]string{}
	for _, n := range nodes {
		if inject.ClusterFrom(server, []inject.Node{n}).HeldBack > 0 {
			out[n.Name] = n.KubeletVersion
		}
	}
	return out
}

// nodeChange is one Node that began or stopped holding native sidecars
// back.
type nodeChange struct {
	Name, KubeletVersion string
	Holds                bool   // it began (or holds, at another version); false: it stopped
	Was                  string // its kubelet version before, when it stopped or changed
}

// heldBackChanges is what differs between two sets of Nodes holding
// native sidecars back (heldBack's), by name: those that hold them back
// now and did not, or at another version, then those that no longer do
// (upgraded or gone). Pure: the loop logs them.
func heldBackChanges(before, after map[string]string) []nodeChange {
	var out []nodeChange
	for _, name := range slices.Sorted(maps.Keys(after)) {
		if was, ok := before[name]; !ok || was != after[name] {
			out = append(out, nodeChange{Name: name, KubeletVersion: after[name], Holds: true, Was: was})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(before)) {
		if _, ok := after[name]; !ok {
			out = append(out, nodeChange{Name: name, Was: before[name]})
		}
	}
	return out
}

// maxNodeLines bounds the Node lines logged for one change of the
// cluster (thousands of old Nodes at start): the rest are counted.
const maxNodeLines = 20

// logNodes logs each Node that began or stopped holding native sidecars
// back, at most maxNodeLines of them.
func (c *Config) logNodes(changes []nodeChange, now map[string]string) {
	for i, ch := range changes {
		if i == maxNodeLines {
			c.Log.Warn("more Nodes changed whether they hold native sidecars back", "more", len(changes)-i, "heldBack", len(now))
			return
		}
		if ch.Holds {
			c.Log.Warn("a Node holds native sidecars back: its kubelet is older than 1."+strconv.Itoa(inject.NativeMinor)+", so mode auto gives the pair",
				"node", ch.Name, "kubeletVersion", ch.KubeletVersion, "heldBack", len(now))
		} else {
			c.Log.Info("a Node no longer holds native sidecars back (upgraded or gone)", "node", ch.Name, "kubeletVersionWas", ch.Was,
				"heldBack", len(now))
		}
	}
}

// logCluster says what a new answer means for the Pods to come.
func (c *Config) logCluster(cl inject.Cluster) {
	mode := c.target().Mode
	switch {
	case mode == inject.ModeNative && !cl.NativeSidecars:
		c.Log.Error("mode native, but the cluster does not have native sidecars everywhere: Pods given them could never start; use mode auto or pair",
			"kubeVersion", cl.Version, "nativeSidecars", false, "reason", cl.Reason, "heldBack", cl.HeldBack)
	default:
		c.Log.Info("cluster checked", "kubeVersion", cl.Version, "nativeSidecars", cl.NativeSidecars, "mode", mode,
			"reason", cl.Reason, "heldBack", cl.HeldBack)
	}
}
