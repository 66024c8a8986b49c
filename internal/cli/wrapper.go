package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// CatchSignals starts catching the signals a wrapper forwards, before the
// command line is even parsed: a SIGTERM in the first milliseconds must
// not kill the wrapper before it can record the job's end. The returned
// function stops catching.
func CatchSignals(sigs []os.Signal) (chan os.Signal, func()) {
	ch := make(chan os.Signal, 16)
	signal.Notify(ch, sigs...)
	return ch, func() { signal.Stop(ch) }
}

// Catching is signal catching being set up in the background.
type Catching struct {
	done chan struct{}
	ch   chan os.Signal
	stop func()
}

// CatchSignalsSoon is CatchSignals in a goroutine of its own: the runtime
// enables each signal with a round trip to its signal thread, and the
// caller's own start-up goes on meanwhile. Signals waits until they are
// caught.
func CatchSignalsSoon(sigs []os.Signal) *Catching {
	c := &Catching{done: make(chan struct{})}
	go func() {
		c.ch, c.stop = CatchSignals(sigs)
		close(c.done)
	}()
	return c
}

// Signals returns the channel the signals arrive on, once they are caught.
func (c *Catching) Signals() chan os.Signal {
	<-c.done
	return c.ch
}

// Stop stops catching (once they are caught).
func (c *Catching) Stop() {
	<-c.done
	c.stop()
}

// DirError describes a problem with the shared directory and what to do
// about it: a permission problem comes from containers running as
// different users.
func DirError(dir string, err error) error {
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("--dir %s: %w (uid %d cannot write it: when the Pod's containers run as different users, set the Pod's securityContext.fsGroup, or use the emptyDir's root as --dir, which every user can write)", dir, err, os.Getuid())
	}
	return fmt.Errorf("--dir %s: %w", dir, err)
}

// Command returns the wrapped command from a passthrough argument: kong
// keeps a leading "--" in the slice.
func Command(args []string) []string {
	if len(args) > 0 && args[0] == "--" {
		return args[1:]
	}
	return args
}

// TerminationLog writes a one-line summary for Kubernetes to show as the
// container's termination message. It is best effort: the file exists only
// in a container, and an error is only logged.
func TerminationLog(path, message string, log *slog.Logger) {
	if path == "" {
		return
	}
	// Never create it, follow a link, or block on a FIFO: it is the
	// kubelet's file or nothing.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err == nil {
		_, err = io.WriteString(f, strings.TrimSpace(message)+"\n")
		f.Close()
	}
	if err != nil {
		log.Debug("termination log not written", "path", path, "err", err)
	}
}
