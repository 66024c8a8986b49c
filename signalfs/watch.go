package signalfs

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/sys/unix"
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
	// Replaced receives a value when the directory's path no longer names
	// the watched directory: it was removed, and maybe made again. The
	// consumer must open the path again (see Dir.Replaced); this watcher
	// sees nothing more.
	Replaced <-chan struct{}

	mode   string
	cancel context.CancelFunc
	done   chan struct{}
}

// Mode says how the watcher learns of changes: "inotify" or "poll".
func (w *Watcher) Mode() string { return w.mode }

// Close stops the watcher and waits for its goroutine to end.
func (w *Watcher) Close() {
	w.cancel()
	<-w.done
}

// Watch starts watching the directory. It falls back to polling, and logs
// why, when inotify cannot be used.
//
// That the directory was removed cannot be learnt from its own watch: the
// kernel reports it only once nothing holds the directory any more, and
// the lock files its readers and writers keep open do. So the parent
// directory is watched too, for the directory's name; when polling, each
// poll also checks it.
func (d *Dir) Watch(opts WatchOptions) *Watcher {
	if opts.PollInterval <= 0 {
		opts.PollInterval = DefaultPollInterval
	}
	log := cmp.Or(opts.Logger, slog.New(slog.DiscardHandler))
	changed := make(chan struct{}, 1)
	replaced := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	w := &Watcher{C: changed, Replaced: replaced, cancel: cancel, done: make(chan struct{})}

	var fsw *fsnotify.Watcher
	var parent *parentWatch
	w.mode = "poll"
	if !opts.Poll {
		var err error
		if fsw, err = d.newInotify(); err != nil {
			log.Warn("inotify unavailable; polling the directory instead", "dir", d.path, "pollInterval", opts.PollInterval, "err", err)
		} else {
			w.mode = "inotify"
			if parent, err = watchParent(d.path); err != nil {
				// Only the directory's removal goes unnoticed: an emptyDir
				// is a mount point and cannot be removed anyway.
				log.Debug("cannot watch the directory's parent; its removal would go unnoticed", "dir", d.path, "err", err)
			}
		}
	}
	l := &watchLoop{d: d, interest: opts.Files, changed: changed, replaced: replaced, interval: opts.PollInterval, log: log}
	// The watches are set (or polling chosen): now the first scan.
	l.notify()
	l.checkReplaced()
	go func() {
		defer close(w.done)
		if parent != nil {
			go parent.run(l.checkReplaced)
			defer parent.close()
		}
		l.run(ctx, fsw)
	}()
	return w
}

// newInotify watches the directory.
func (d *Dir) newInotify() (*fsnotify.Watcher, error) {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("create inotify watcher: %w", err)
	}
	if err := fsw.Add(d.path); err != nil {
		fsw.Close()
		return nil, fmt.Errorf("watch %s: %w", d.path, err)
	}
	return fsw, nil
}

// watchLoop is owned by one goroutine: it owns the fsnotify watcher and the
// polling ticker.
type watchLoop struct {
	d        *Dir
	interest []string // file names; none: every marker file
	changed  chan struct{}
	replaced chan struct{}
	interval time.Duration
	log      *slog.Logger
	gone     atomic.Bool // replaced was sent
}

func (l *watchLoop) notify() {
	select {
	case l.changed <- struct{}{}:
	default: // one is pending already; the consumer will re-read everything
	}
}

// checkReplaced tells the consumer, once, that the directory was replaced.
// It is called from the loop and from the parent's watch.
func (l *watchLoop) checkReplaced() {
	if l.d.Replaced() && l.gone.CompareAndSwap(false, true) {
		l.replaced <- struct{}{}
	}
}

func (l *watchLoop) run(ctx context.Context, fsw *fsnotify.Watcher) {
	if fsw != nil {
		err := l.runInotify(ctx, fsw)
		fsw.Close()
		if err == nil {
			return
		}
		l.log.Warn("inotify failed; polling the directory instead", "dir", l.d.path, "pollInterval", l.interval, "err", err)
		l.notify()
	}
	ticker := time.NewTicker(l.interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			l.checkReplaced()
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
			// Temporary files never interest anyone.
			if name := filepath.Base(ev.Name); !strings.HasPrefix(name, tempPrefix) && (len(l.interest) == 0 || slices.Contains(l.interest, name)) {
				l.notify()
			}
		case err, ok := <-fsw.Errors:
			if !ok {
				return errors.New("inotify error channel closed")
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				// Events were dropped: everything may have changed.
				l.log.Warn("inotify queue overflowed; rescanning", "dir", l.d.path)
				l.checkReplaced()
				l.notify()
				continue
			}
			return err
		}
	}
}

// parentWatch watches the directory's parent for the directory's own name:
// the kernel reports a removed directory to its own watchers only once
// nothing holds it open, and the lock files its readers and writers keep
// open do. Only name events are asked for (create, delete, move), so files
// written next to the directory wake nobody; fsnotify cannot narrow a watch
// so (its option for that is unexported), hence this small reader.
type parentWatch struct {
	f    *os.File
	base string
}

func watchParent(dir string) (*parentWatch, error) {
	clean := filepath.Clean(dir)
	parent := filepath.Dir(clean)
	if parent == clean {
		return nil, errors.New("the directory has no parent")
	}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, err
	}
	const mask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_ONLYDIR
	if _, err := unix.InotifyAddWatch(fd, parent, mask); err != nil {
		unix.Close(fd)
		return nil, err
	}
	// Non-blocking, so reads go through Go's poller and Close ends them.
	return &parentWatch{f: os.NewFile(uintptr(fd), "inotify:"+parent), base: filepath.Base(clean)}, nil
}

// run calls changed for every event naming the directory, until close.
func (p *parentWatch) run(changed func()) {
	buf := make([]byte, 4096)
	for {
		n, err := p.f.Read(buf)
		if err != nil {
			return
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if string(name) == p.base || ev.Mask&unix.IN_Q_OVERFLOW != 0 {
				changed()
			}
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
	}
}

func (p *parentWatch) close() { p.f.Close() }
