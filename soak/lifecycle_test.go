//go:build soak

package soak

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/job-signal/job-signal/internal/testing/fake"
	"github.com/job-signal/job-signal/internal/testing/procinfo"
)

// lifecycleDeadline bounds one lifecycle: a hang is a failure.
const lifecycleDeadline = 60 * time.Second

// lifecycle runs one scenario: a job (one or two attempts) and its sidecars,
// each in a directory of its own.
type lifecycle struct {
	sc    *scenario
	bins  binaries
	root  string // everything of this lifecycle is under root
	dir   string // the shared --dir
	addr  string // a loopback address for this lifecycle's ports alone
	begun time.Time
	ctx   context.Context

	mu         sync.Mutex // guards what follows
	wrappers   []*wrapper
	sidecars   map[string]*wrapper
	jobs       []*wrapper
	terminated bool
	termAt     time.Time
	killAt     map[int]time.Time // attempt index -> when the harness SIGKILLed it
	notStarted []string
	hung       []string // what was still running at the deadline
	harness    []string // the harness's own failures (could not start a process...)

	// The faults of faults_test.go.
	mounted      bool              // --dir is a small tmpfs
	termAloneAt  map[int]time.Time // attempt index -> when its job-signal alone got SIGTERM
	kills        []jobKill         // SIGKILLs of job-signal
	resolved     bool              // the final job-signal was killed before its first entry: Pod deleted
	stopKillAt   time.Time         // when the stop-kill sidecar's container was killed
	stopKillNote string

	jobDone chan struct{} // closed once the last attempt has ended
}

func newLifecycle(sc *scenario, bins binaries, root string) *lifecycle {
	n := sc.Index + 1
	return &lifecycle{
		sc: sc, bins: bins, root: root, dir: filepath.Join(root, "signal"),
		// 127.0.0.0/8 is all loopback on Linux: a private address per
		// lifecycle means its fixed ports can never collide with another's.
		addr:        fmt.Sprintf("127.%d.%d.%d", 10+n/62500, n/250%250, 1+n%250),
		sidecars:    map[string]*wrapper{},
		killAt:      map[int]time.Time{},
		termAloneAt: map[int]time.Time{},
		jobDone:     make(chan struct{}),
	}
}

func (l *lifecycle) path(parts ...string) string {
	return filepath.Join(append([]string{l.root}, parts...)...)
}

func (l *lifecycle) recPath(name string) string { return l.path("rec", name+".log") }

func jobName(i int) string { return fmt.Sprintf("job-%d", i+1) }

func (l *lifecycle) harnessFailure(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.harness = append(l.harness, fmt.Sprintf(format, args...))
}

// run plays the scenario to its end, or to the deadline.
func (l *lifecycle) run() error {
	if err := os.MkdirAll(l.path("rec"), 0o755); err != nil {
		return err
	}
	if l.sc.PreCreateDir {
		if err := os.Mkdir(l.dir, 0o755); err != nil {
			return err
		}
	}
	if l.sc.Kind == kindFull {
		if err := l.mountFull(); err != nil {
			return err
		}
	}
	var cancel context.CancelFunc
	l.begun = time.Now()
	l.ctx, cancel = context.WithDeadline(context.Background(), l.begun.Add(lifecycleDeadline))
	defer cancel()

	var starters sync.WaitGroup
	for i, s := range l.sc.Sidecars {
		starters.Add(1)
		go func() {
			defer starters.Done()
			l.startSidecarWhenDue(i, s)
		}()
	}
	for i, a := range l.sc.Attempts {
		if !l.beforeAttempt(i, a) || !l.runAttempt(i, a) {
			break
		}
	}
	close(l.jobDone)
	starters.Wait()
	if l.sc.StopKill != "" {
		l.stopKillWhenDue()
	}
	l.waitAll()
	return nil
}

// sleep waits d, a delay that is part of the scenario; false if the
// lifecycle's deadline came first.
func (l *lifecycle) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-l.ctx.Done():
		return false
	}
}

func (l *lifecycle) waitExit(w *wrapper) bool {
	select {
	case <-w.done:
		return true
	case <-l.ctx.Done():
		return false
	}
}

// runAttempt runs job-signal once and, for the fault kinds, injects the
// fault. It returns false if the lifecycle should not go on.
func (l *lifecycle) runAttempt(i int, a attempt) bool {
	if !l.sleep(a.Delay) {
		return false
	}
	l.mu.Lock()
	w, err := l.start(jobName(i), l.bins.jobSignal, l.jobArgs(i, a))
	if err == nil {
		l.jobs = append(l.jobs, w)
	}
	l.mu.Unlock()
	if err != nil {
		l.harnessFailure("start %s: %v", jobName(i), err)
		return false
	}
	switch {
	case a.OOM:
		l.oomKill(i, a, w)
	case a.TermAlone:
		l.termAloneWhenDue(i, w)
	case l.sc.Kind == kindTermination:
		l.terminateWhenDue(i, w)
	}
	return l.waitExit(w)
}

// startSidecarWhenDue starts sidecar i after its delay, or, if it is late,
// once the job has ended.
func (l *lifecycle) startSidecarWhenDue(i int, s *sidecar) {
	if s.Late {
		select {
		case <-l.jobDone:
		case <-l.ctx.Done():
		}
	} else {
		l.sleep(s.StartDelay)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.terminated || l.ctx.Err() != nil {
		l.notStarted = append(l.notStarted, s.Name)
		return
	}
	w, err := l.start("sidecar-"+s.Name, l.bins.sidecarWatch, l.sidecarArgs(i, s))
	if err != nil {
		l.harness = append(l.harness, fmt.Sprintf("start sidecar %s: %v", s.Name, err))
		return
	}
	l.sidecars[s.Name] = w
}

// waitAll waits until every wrapper has exited. At the deadline it records
// what still runs, for the report, and kills everything of the lifecycle.
func (l *lifecycle) waitAll() {
	l.mu.Lock()
	wrappers := append([]*wrapper(nil), l.wrappers...)
	l.mu.Unlock()
	for _, w := range wrappers {
		if l.waitExit(w) {
			continue
		}
		l.mu.Lock()
		listed := map[int]bool{}
		for _, w := range l.wrappers {
			if !w.exitedNow() {
				w.killedAtDeadline = true
				listed[w.cmd.Process.Pid] = true
				l.hung = append(l.hung, fmt.Sprintf("%s (%s)", w.label, procinfo.Describe(w.cmd.Process.Pid)))
			}
		}
		for _, st := range procinfo.Matching(l.root) {
			if !listed[st.PID] {
				l.hung = append(l.hung, procinfo.Describe(st.PID))
			}
		}
		l.mu.Unlock()
		for _, w := range wrappers {
			w.cmd.Process.Kill()
		}
		for _, w := range wrappers {
			<-w.done
		}
		l.killMatching(l.root)
		return
	}
}

// hasEvent reports whether a record file holds an event of this kind.
func hasEvent(path, kind string) bool {
	events, _ := fake.ReadEvents(path)
	return len(events.Of(kind)) > 0
}
