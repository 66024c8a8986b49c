package proc

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// reaper waits for every child of the process (wait4(-1)), hands our own
// children their status, and discards orphans. It is needed when this
// process is PID 1 of a container, or a child subreaper: orphaned
// grandchildren are re-parented to us and stay zombies unless reaped.
type reaper struct {
	// mu is held while starting a child and while reaping, so a child that
	// exits at once is registered before anyone can reap it.
	mu       sync.Mutex
	children map[int]*Child
	log      *slog.Logger
	// orphanReaped gets a value (dropped when one is pending) each time
	// an orphan is reaped.
	orphanReaped chan struct{}
}

var (
	reaperOnce sync.Once
	// activeReaper is the reaper once reaping is enabled, else nil.
	activeReaper atomic.Pointer[reaper]
)

// enableReaping makes this process reap all its children, including
// orphans re-parented to it. Call it before starting any child. It is
// process-wide and cannot be undone; it must not be used where other code
// in the process waits for its own children (os/exec).
func enableReaping(log *slog.Logger) {
	reaperOnce.Do(func() {
		r := &reaper{children: map[int]*Child{}, log: log, orphanReaped: make(chan struct{}, 1)}
		sigchld := make(chan os.Signal, 1)
		signal.Notify(sigchld, unix.SIGCHLD)
		activeReaper.Store(r)
		go func() {
			for range sigchld {
				r.reap()
			}
		}()
		// Zombies from before we were watching.
		r.reap()
	})
}

// owns reports whether pid is a child started through Start.
func (r *reaper) owns(pid int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.children[pid]
	return ok
}

// Reaping reports whether this process reaps every child (see
// SetUpReaping): orphans of its descendants are then re-parented to it.
func Reaping() bool { return activeReaper.Load() != nil }

// OrphanReaped fires after an orphan was reaped; nil when not reaping.
func OrphanReaped() <-chan struct{} {
	if r := activeReaper.Load(); r != nil {
		return r.orphanReaped
	}
	return nil
}

func (r *reaper) reap() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || pid <= 0 {
			return // ECHILD: no children; 0: none has ended
		}
		if c, ok := r.children[pid]; ok {
			delete(r.children, pid)
			c.finish(statusOf(ws))
			continue
		}
		r.log.Debug("reaped orphaned process", "pid", pid, "status", statusOf(ws).String())
		select {
		case r.orphanReaped <- struct{}{}:
		default:
		}
	}
}

// SetUpReaping reaps orphaned zombies when this process is PID 1 (the usual
// case in a container), or when asked to be a child subreaper.
func SetUpReaping(subreaper bool, log *slog.Logger) {
	switch {
	case os.Getpid() == 1:
		enableReaping(log)
	case subreaper:
		// The one orphaned descendants are re-parented to, instead of PID 1.
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			log.Warn("cannot become a child subreaper; orphans will not be reaped here", "err", fmt.Errorf("become child subreaper: %w", err))
			return
		}
		enableReaping(log)
	}
}
