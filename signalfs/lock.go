package signalfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// Lock is an exclusive flock held for a process's whole life. The kernel
// releases it when the process dies, however it dies (SIGKILL, OOM kill of
// the whole container), which is how the others learn it is gone without
// it writing anything: job-signal holds job.lock, each sidecar-watch
// sidecar-NAME.lock.
type Lock struct {
	file *os.File
	// Honoured is false when the filesystem accepted the lock but did not
	// enforce it (a second, independent lock attempt also succeeded): some
	// network and FUSE filesystems do this. Nobody may rely on the lock
	// then; the state files say so (liveness=none).
	Honoured bool
}

// ErrLockHeld is wrapped when another live process holds the lock
// exclusively: another job-signal, or another sidecar-watch of that name,
// uses the directory.
var ErrLockHeld = errors.New("held by another process")

// Liveness is what the holder's state file says of its liveness: flock
// when the lock is honoured, none when nobody can rely on it.
func (l *Lock) Liveness() string {
	if l.Honoured {
		return LivenessFlock
	}
	return LivenessNone
}

// readersGone bounds how long a lock taken shared by readers may delay an
// exclusive one: readers hold it for an instant (see WaitLockFree).
const readersGone = time.Second

// LockJob takes the exclusive lock on job.lock. A job.lock that does not
// exist yet is created already locked, holding restartPolicy, so that
// sidecars can tell what a job-signal that died before writing job.state
// meant; when the directory has no room for that content the file is
// created empty (sidecars then take the death as final). Another
// job-signal holding the lock is an error at once (ErrLockHeld): two jobs
// on one directory would overwrite each other's results.
func (d *Dir) LockJob(restartPolicy string) (*Lock, error) {
	r := newRecord(kindLock)
	r.set("restart-policy", restartPolicy)
	content, err := r.encode()
	if err != nil {
		return nil, err
	}
	l, err := d.lock(JobLockFile, content)
	if errors.Is(err, ErrLockHeld) {
		holder := ""
		if s, found, _ := d.ReadJob(); found && s.PID != 0 {
			holder = fmt.Sprintf(" (job-signal pid %d in its container, attempt %d, started %s)", s.PID, s.Attempt, s.Started.Format(time.RFC3339))
		}
		err = fmt.Errorf("%w%s; is another job-signal using --dir %s?", err, holder, d.path)
	}
	return l, err
}

// LockSidecar takes the exclusive lock on sidecar-NAME.lock. Another
// sidecar-watch with the same name is an error at once (ErrLockHeld).
func (d *Dir) LockSidecar(name string) (*Lock, error) {
	if err := ValidName(name); err != nil {
		return nil, err
	}
	l, err := d.lock(SidecarLockFile(name), nil)
	if errors.Is(err, ErrLockHeld) {
		holder := ""
		if s, found, _ := d.ReadSidecar(name); found && s.PID != 0 {
			holder = fmt.Sprintf(" (sidecar-watch pid %d in its container)", s.PID)
		}
		err = fmt.Errorf("%w%s; is another sidecar-watch --name %s using --dir %s?", err, holder, name, d.path)
	}
	return l, err
}

func (d *Dir) lock(file string, content []byte) (*Lock, error) {
	f, err := d.openLockFile(file)
	for errors.Is(err, fs.ErrNotExist) {
		var l *Lock
		if l, err = d.createLocked(file, content); !errors.Is(err, fs.ErrExist) {
			if err != nil {
				err = fmt.Errorf("create lock %s: %w", d.join(file), err)
			}
			return l, err
		}
		// Another process created it first: lock theirs.
		f, err = d.openLockFile(file)
	}
	if err != nil {
		return nil, fmt.Errorf("open lock: %w", err)
	}
	deadline := time.Now().Add(readersGone)
	for delay := time.Millisecond; ; delay = min(2*delay, 50*time.Millisecond) {
		err = flock(f, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return &Lock{file: f, Honoured: d.held(file)}, nil
		}
		if noLocking(err) {
			// No locking here at all: carry on without kernel-backed liveness.
			return &Lock{file: f, Honoured: false}, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", d.join(file), err)
		}
		// Readers hold it shared for an instant; an exclusive holder is
		// another writer, which will not let go.
		if d.held(file) || time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", d.join(file), ErrLockHeld)
		}
		time.Sleep(delay)
	}
}

// openLockFile opens an existing lock file as openFile does, then makes
// its descriptor blocking again: an *os.File of a non-blocking descriptor
// starts the runtime's poller (an epoll instance, an eventfd, a thread
// polling them), which a lock held for life never uses.
func (d *Dir) openLockFile(file string) (*os.File, error) {
	fd, err := d.openFD(file, os.O_RDWR)
	if err != nil {
		return nil, err
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: d.join(file), Err: err}
	}
	return os.NewFile(uintptr(fd), d.join(file)), nil
}

// held reports whether someone holds file's lock exclusively: a shared
// lock cannot be had then, while it can beside readers. Right after we
// lock a file ourselves, it says whether the filesystem enforces that lock
// against another open file description.
func (d *Dir) held(file string) bool {
	s, _ := d.lockState(file)
	return s == LockHeld
}

// createLocked creates file already locked, so that nobody ever sees it
// unlocked while its creator lives: a lock file that exists and is free
// means its creator is gone. The file is made without a name (O_TMPFILE),
// written, locked, and only then linked into place, so the lock file is
// the first entry its creator makes in the directory. Where O_TMPFILE is
// not available it is made in the writer's private subdirectory instead.
func (d *Dir) createLocked(file string, content []byte) (*Lock, error) {
	fd, err := openat(d.dirfd(), ".", unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, filePerm)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EINVAL) {
		return d.createLockedNamed(file, content) // no O_TMPFILE here
	}
	if err != nil {
		return nil, err
	}
	return d.lockAndLink(fd, file, content, func() error {
		// A file without a name is linked through its /proc handle; that
		// needs no privilege, where AT_EMPTY_PATH does.
		err := unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), d.dirfd(), file, unix.AT_SYMLINK_FOLLOW)
		if errors.Is(err, unix.ENOENT) {
			err = unix.Linkat(fd, "", d.dirfd(), file, unix.AT_EMPTY_PATH)
		}
		return err
	})
}

// createLockedNamed is createLocked through a named temporary file.
func (d *Dir) createLockedNamed(file string, content []byte) (*Lock, error) {
	tmp, err := d.writeTemp(file, nil)
	if err != nil {
		return nil, err
	}
	defer tmp.remove()
	fd, err := openat(int(tmp.dir.Fd()), tmp.name, unix.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return d.lockAndLink(fd, file, content, func() error {
		return unix.Linkat(int(tmp.dir.Fd()), tmp.name, d.dirfd(), file, 0)
	})
}

// lockAndLink writes content into the unlinked or hidden file fd, locks it
// and links it into place as file; on failure it closes fd. A content that
// does not fit (no space left) is left out rather than failing: the lock
// matters more.
func (d *Dir) lockAndLink(fd int, file string, content []byte, link func() error) (_ *Lock, err error) {
	f := os.NewFile(uintptr(fd), d.join(file))
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	if err := f.Chmod(filePerm); err != nil {
		return nil, err
	}
	if _, err := f.Write(content); errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT) {
		f.Truncate(0)
	} else if err != nil {
		return nil, err
	}
	honoured := true
	if err := flock(f, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if !noLocking(err) {
			return nil, err
		}
		honoured = false
	}
	if err := link(); err != nil {
		return nil, err // EEXIST, when another process linked it first
	}
	return &Lock{file: f, Honoured: honoured && d.held(file)}, nil
}

// noLocking reports an error meaning the filesystem has no flock at all.
func noLocking(err error) bool {
	return errors.Is(err, unix.ENOLCK) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EINVAL)
}

func flock(f *os.File, how int) error { return flockFD(int(f.Fd()), how) }

func flockFD(fd, how int) error {
	return retryEINTR(func() error { return unix.Flock(fd, how) })
}

// Release drops the lock. Closing the descriptor is what releases it, as
// process death would.
func (l *Lock) Release() error { return l.file.Close() }
