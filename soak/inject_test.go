//go:build soak

package soak

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/job-signal/job-signal/internal/testing/fake"
)

// Injecting the faults: OOM kills, Pod termination, a TERM to job-signal
// alone, a full directory, a --stop-after sidecar killed while stopping.

// commandStarted waits until attempt i's COMMAND has recorded its start
// (it catches its stop signal from then on). False if job-signal ended
// first, or the deadline came.
func (l *lifecycle) commandStarted(i int, w *wrapper) bool {
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		if hasEvent(l.recPath(jobName(i)), "start") {
			return true
		}
		select {
		case <-tick.C:
		case <-w.done:
			return hasEvent(l.recPath(jobName(i)), "start")
		case <-l.ctx.Done():
			return false
		}
	}
}

// oomKill does what the kernel does to a container out of memory since
// Kubernetes 1.28 on cgroup v2: SIGKILL to every process of the main side.
// job-signal goes first, so the sidecars can only learn it from job.lock.
func (l *lifecycle) oomKill(i int, a attempt, w *wrapper) {
	if !a.OOMEarly && !l.commandStarted(i, w) {
		return // job-signal ended on its own; the exit code check says more
	}
	if !l.sleep(a.OOMAfter) {
		return
	}
	killedAt := time.Now()
	l.mu.Lock()
	l.killAt[i] = killedAt
	l.mu.Unlock()
	w.cmd.Process.Kill()
	if !l.waitExit(w) {
		return
	}
	// job-signal is reaped, so it starts nothing more: kill all it left.
	l.killMatching(l.recPath(jobName(i)))
	l.classifyKill(i, w, killedAt)
}

// terminateWhenDue deletes the Pod at the scenario's moment.
func (l *lifecycle) terminateWhenDue(i int, w *wrapper) {
	if !l.sc.TermEarly {
		// If job-signal ended before COMMAND started, the Pod is
		// deleted all the same.
		l.commandStarted(i, w)
	}
	if !l.sleep(l.sc.TermAfter) {
		return
	}
	l.terminate()
}

// terminate is the kubelet deleting the Pod: SIGTERM to every container's
// main process (the wrappers) at once, and no container starts any more.
func (l *lifecycle) terminate() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.terminated = true
	l.termAt = time.Now()
	for _, w := range l.wrappers {
		// os.Process signals through a pidfd: never a reused PID.
		w.cmd.Process.Signal(syscall.SIGTERM)
	}
}

// fullSize is the full lifecycles' tmpfs: room for six sidecars' files.
const fullSize = "size=256k"

// mountFull mounts the small tmpfs at --dir (in the soak's own mount
// namespace, see TestMain).
func (l *lifecycle) mountFull() error {
	if err := unix.Mount("tmpfs", l.dir, "tmpfs", 0, fullSize); err != nil {
		return fmt.Errorf("mount a tmpfs at %s: %w", l.dir, err)
	}
	l.mounted = true
	return nil
}

func (l *lifecycle) unmount() {
	if l.mounted {
		unix.Unmount(l.dir, unix.MNT_DETACH)
		l.mounted = false
	}
}

func (l *lifecycle) hog() string { return l.path("signal", "hog") }

// beforeAttempt does what the scenario asks before attempt i starts; false
// if the lifecycle cannot go on.
func (l *lifecycle) beforeAttempt(i int, a attempt) bool {
	if i == 0 && startSidecarsFirst(l.sc.Kind) && !l.sidecarsRecorded() {
		return false
	}
	if i == 0 && l.sc.FullAtStart {
		if err := fake.Fill(l.hog()); err != nil {
			l.harnessFailure("%v", err)
			return false
		}
	}
	if a.FreeSpace {
		if err := os.Remove(l.hog()); err != nil {
			l.harnessFailure("free the directory's space: %v", err)
			return false
		}
	}
	return true
}

// sidecarsRecorded waits until every sidecar has started and recorded its
// state (or its sidecar-watch has exited): false at the deadline.
func (l *lifecycle) sidecarsRecorded() bool {
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		l.mu.Lock()
		done := true
		for _, s := range l.sc.Sidecars {
			w := l.sidecars[s.Name]
			if w == nil || !w.exitedNow() && !exists(l.path("signal", "sidecar-"+s.Name+".state")) {
				done = false
			}
		}
		l.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-tick.C:
		case <-l.ctx.Done():
			return false
		}
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// termAloneWhenDue sends SIGTERM to attempt i's job-signal alone, as the
// kubelet does when a liveness or startup probe fails.
func (l *lifecycle) termAloneWhenDue(i int, w *wrapper) {
	if !l.sc.TermEarly && !l.commandStarted(i, w) {
		return // job-signal ended before COMMAND started
	}
	if !l.sleep(l.sc.TermAfter) {
		return
	}
	l.mu.Lock()
	l.termAloneAt[i] = time.Now()
	l.mu.Unlock()
	w.cmd.Process.Signal(syscall.SIGTERM)
}

// jobKill is a SIGKILL of job-signal by the harness, with what it had
// made in the directory by then.
type jobKill struct {
	attempt int
	delay   time.Duration // from exec to the kill
	entries []string      // in the directory, the sidecars' own aside
}

// before: killed before its first entry, exactly like a job-signal that
// never ran.
func (k jobKill) before() bool { return len(k.entries) == 0 }

// classifyKill records what attempt i's job-signal, killed and gone with
// everything it started, left in the directory. Killed before its first
// entry, the final attempt leaves the sidecars waiting, as they must: the
// Job's activeDeadlineSeconds ends such a Pod, here a Pod deletion (TERM
// to every container).
func (l *lifecycle) classifyKill(i int, w *wrapper, killedAt time.Time) {
	k := jobKill{attempt: i, delay: killedAt.Sub(w.started), entries: jobEntries(l.dir)}
	l.mu.Lock()
	l.kills = append(l.kills, k)
	l.mu.Unlock()
	if k.before() && i == len(l.sc.Attempts)-1 {
		l.mu.Lock()
		l.resolved = true
		l.mu.Unlock()
		l.terminate()
	}
}

// jobEntries lists the directory's entries but the sidecars' own (and the
// full lifecycles' hog).
func jobEntries(dir string) []string {
	list, _ := os.ReadDir(dir)
	var names []string
	for _, e := range list {
		n := e.Name()
		if !strings.HasPrefix(n, "sidecar-") && !strings.HasPrefix(n, ".sidecar-") && n != "hog" {
			names = append(names, n)
		}
	}
	return names
}

// stopKillWhenDue SIGKILLs the chosen sidecar's container (sidecar-watch
// first, then its sidecar and grandchild) once its sidecar received its
// stop signal, which it ignores.
func (l *lifecycle) stopKillWhenDue() {
	name := l.sc.StopKill
	l.mu.Lock()
	w := l.sidecars[name]
	l.mu.Unlock()
	if w == nil {
		return
	}
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for !hasEvent(l.recPath(name), "stop") {
		select {
		case <-tick.C:
		case <-w.done:
			l.mu.Lock()
			l.stopKillNote = "sidecar-watch " + name + " exited before its sidecar was asked to stop: not killed"
			l.mu.Unlock()
			return
		case <-l.ctx.Done():
			return
		}
	}
	l.mu.Lock()
	l.stopKillAt = time.Now()
	l.mu.Unlock()
	w.cmd.Process.Kill()
	l.waitExit(w)
	// Every process of the container: their command lines name its files.
	l.killMatching(l.path("rec", name+"."))
}
