package sidecarwatch

import (
	"fmt"
	"strings"

	"github.com/job-signal/job-signal/signalfs"
	"github.com/job-signal/job-signal/signalfs/sidecarname"
)

// afterDecision is what the --after sidecars mean for a sidecar waiting to
// start.
type afterDecision struct {
	start   bool     // every one is ready: start now
	pending []string // those not ready yet, each with why
	// stop: there is no point starting any more (the Pod is terminating);
	// why.
	stop string
	err  error // the order can never be met
}

// decideAfter decides from the --after sidecars' views (read through view,
// once each) whether a sidecar waiting to start starts, waits, gives up or
// fails: a sidecar waited for stopped or failed for good, or a cycle.
func decideAfter(self string, after []string, dir string, view func(name string) signalfs.SidecarView) afterDecision {
	views := map[string]signalfs.SidecarView{}
	once := func(name string) signalfs.SidecarView {
		v, ok := views[name]
		if !ok {
			v = view(name)
			views[name] = v
		}
		return v
	}
	if cycle := cycleFrom(self, after, func(name string) []string { return startEdges(once(name)) }); cycle != nil {
		return afterDecision{err: fmt.Errorf("--after: start-order cycle %s: none of these can ever start", strings.Join(cycle, " -> "))}
	}
	var pending []string
	for _, name := range after {
		v := once(name)
		switch {
		case v.Ready():
		case v.Condition == signalfs.SidecarIsStopped && v.State.Terminating:
			// It got the Pod's TERM before we handled ours: the Pod is
			// going away, as at the ready gate.
			return afterDecision{stop: fmt.Sprintf("the Pod is terminating (sidecar %s stopped for it)", name)}
		case v.NeverReady():
			return afterDecision{err: fmt.Errorf("--after: sidecar %s will not become ready (%s)", name, v.Why(dir))}
		default:
			pending = append(pending, fmt.Sprintf("%s (%s)", name, v.Why(dir)))
		}
	}
	return afterDecision{start: len(pending) == 0, pending: pending}
}

// startEdges are the --after sidecars a sidecar still waits for: only one
// waiting to start can be stuck in a start cycle.
func startEdges(v signalfs.SidecarView) []string {
	if v.Condition == signalfs.SidecarPending && v.State.Phase == signalfs.SidecarWaiting {
		return v.State.After
	}
	return nil
}

// stopEdges are the --stop-after sidecars a sidecar will wait for once the
// job is done: none once it is gone.
func stopEdges(v signalfs.SidecarView) []string {
	if v.Gone() {
		return nil
	}
	return v.State.StopAfter
}

// peers is what the --stop-after sidecars say to a sidecar waiting for
// them to stop.
type peers struct {
	pending    []string // still running
	lockWait   []string // running, with a lock whose release will say they ended
	unlocked   bool     // one runs without an honoured lock: only the directory's events tell
	notRunning []string // dead or never started: not waited for, worth a warning
}

// decideStopAfter sorts the --stop-after sidecars by their views. A sidecar
// that stops writes "stopped" and then exits, releasing its lock, so for
// one with a lock the release says all there is to know: the directory's
// events are needed only for one without.
func decideStopAfter(stopAfter []string, view func(name string) signalfs.SidecarView) peers {
	var p peers
	for _, name := range stopAfter {
		v := view(name)
		if v.Gone() {
			if v.Condition == signalfs.SidecarDead || v.Condition == signalfs.SidecarMissing {
				p.notRunning = append(p.notRunning, name)
			}
			continue
		}
		p.pending = append(p.pending, name)
		if v.State.Liveness == signalfs.LivenessFlock {
			p.lockWait = append(p.lockWait, name)
		} else {
			p.unlocked = true
		}
	}
	return p
}

// cycleFrom looks for a cycle through the ordering reachable from this
// sidecar: its own edges are mine (the state files of others may not show
// them yet), every other sidecar's come from edges(name).
func cycleFrom(self string, mine []string, edges func(name string) []string) []string {
	return sidecarname.FindCycle([]string{self}, func(name string) []string {
		if name == self {
			return mine
		}
		return edges(name)
	})
}
