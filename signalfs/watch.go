package signalfs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// DefaultPollInterval is how often a polling watcher looks, when inotify is
// unavailable or polling was asked for.
const DefaultPollInterval = 250 * time.Millisecond

// WatchOptions configures Watch.
type WatchOptions struct {
	// Files limits the changes reported to these file names in the
	// directory; empty means every marker file.
	Files []string
	// Poll skips inotify and polls (for filesystems where inotify events do
	// not arrive, such as some network filesystems).
	Poll bool
	// PollInterval is the polling period; DefaultPollInterval if zero.
	PollInterval time.Duration
	Logger       *slog.Logger
}

// Watcher reports that marker files of interest may have changed. It does
// not say what changed: the consumer re-reads the files it cares about each
// time C fires, so an event and a scan can never disagree. C fires once
// right after the watch is set, so a marker written before the watcher
// started is seen too.
type Watcher struct {
	// C receives a value whenever files of interest may have changed.
	// Changes that arrive while a value is pending are folded into it.
	C <-chan struct{}

	mode   string
	cancel context.CancelFunc
	done   chan struct{}
}

// Mode says how the watcher learns of changes: "inotify" or "poll".
func (w *Watcher) Mode() string { return w.mode }

// Close stops the watcher and waits for its goroutine to end.
func (w *Watcher) Close() error {
	w.cancel()
	<-w.done
	return nil
}

// Watch starts watching the directory. It falls back to polling, and logs
// why, when inotify cannot be used.
func (d *Dir) Watch(ctx context.Context, opts WatchOptions) (*Watcher, error) {
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	changed := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(ctx)
	w := &Watcher{C: changed, cancel: cancel, done: make(chan struct{})}

	var fsw *fsnotify.Watcher
	if !opts.Poll {
		var err error
		fsw, err = newInotify(d.path)
		if err != nil {
			log.Warn("inotify unavailable; polling the directory instead", "dir", d.path, "interval", opts.PollInterval, "err", err)
		}
	}
	interest := map[string]bool{}
	for _, f := range opts.Files {
		interest[f] = true
	}
	l := &watchLoop{dir: d.path, interest: interest, changed: changed, interval: opts.PollInterval, log: log}
	if fsw != nil {
		w.mode = "inotify"
	} else {
		w.mode = "poll"
	}
	// The watch is set (or polling chosen): now the first scan.
	l.notify()
	go func() {
		defer close(w.done)
		l.run(ctx, fsw)
	}()
	return w, nil
}

func newInotify(path string) (*fsnotify.Watcher, error) {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("create inotify watcher: %w", err)
	}
	if err := fsw.Add(path); err != nil {
		fsw.Close()
		return nil, fmt.Errorf("watch %s: %w", path, err)
	}
	return fsw, nil
}

// watchLoop is owned by one goroutine: it owns the fsnotify watcher and the
// polling ticker.
type watchLoop struct {
	dir      string
	interest map[string]bool
	changed  chan struct{}
	interval time.Duration
	log      *slog.Logger
}

func (l *watchLoop) notify() {
	select {
	case l.changed <- struct{}{}:
	default: // one is pending already; the consumer will re-read everything
	}
}

func (l *watchLoop) run(ctx context.Context, fsw *fsnotify.Watcher) {
	if fsw != nil {
		err := l.runInotify(ctx, fsw)
		fsw.Close()
		if err == nil {
			return
		}
		l.log.Warn("inotify failed; polling the directory instead", "dir", l.dir, "interval", l.interval, "err", err)
		l.notify()
	}
	ticker := time.NewTicker(l.interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			l.notify()
		}
	}
}

// runInotify returns nil when ctx ends, or the error that made inotify
// unusable.
func (l *watchLoop) runInotify(ctx context.Context, fsw *fsnotify.Watcher) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-fsw.Events:
			if !ok {
				return errors.New("inotify event channel closed")
			}
			if ev.Name == l.dir && ev.Has(fsnotify.Remove|fsnotify.Rename) {
				return fmt.Errorf("directory %s was removed or renamed", l.dir)
			}
			if l.interesting(filepath.Base(ev.Name)) {
				l.notify()
			}
		case err, ok := <-fsw.Errors:
			if !ok {
				return errors.New("inotify error channel closed")
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				// Events were dropped: everything may have changed.
				l.log.Warn("inotify queue overflowed; rescanning", "dir", l.dir)
				l.notify()
				continue
			}
			return err
		}
	}
}

func (l *watchLoop) interesting(name string) bool {
	if strings.HasPrefix(name, tempPrefix) {
		return false
	}
	return len(l.interest) == 0 || l.interest[name]
}
