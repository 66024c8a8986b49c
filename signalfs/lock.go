package signalfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
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

// LockJob takes the exclusive lock on job.lock, waiting up to wait for a
// sidecar that holds it briefly (sidecars take it, shared, only for an
// instant after the previous holder died). A lock held longer belongs to
// another job-signal on the same directory, which is a configuration error.
// A job.lock that does not exist yet is created holding restartPolicy, so
// that sidecars can tell what a job-signal that died before writing
// job.state meant.
func (d *Dir) LockJob(ctx context.Context, wait time.Duration, restartPolicy string) (*Lock, error) {
	content, err := jobLockInfo{restartPolicy: restartPolicy}.MarshalText()
	if err != nil {
		return nil, err
	}
	return d.lock(ctx, JobLockFile, content, wait, "another job-signal")
}

// LockSidecar takes the exclusive lock on sidecar-NAME.lock, waiting up to
// wait for a reader's brief shared lock.
func (d *Dir) LockSidecar(ctx context.Context, name string, wait time.Duration) (*Lock, error) {
	if err := ValidName(name); err != nil {
		return nil, err
	}
	return d.lock(ctx, SidecarLockFile(name), nil, wait, "another sidecar-watch --name "+name)
}

func (d *Dir) lock(ctx context.Context, file string, content []byte, wait time.Duration, holder string) (*Lock, error) {
	path := d.join(file)
	f, err := openNoFollow(path, os.O_RDWR)
	for errors.Is(err, fs.ErrNotExist) {
		var l *Lock
		if l, err = d.createLocked(file, content); !errors.Is(err, fs.ErrExist) {
			return l, err
		}
		// Another process created it first: lock theirs.
		f, err = openNoFollow(path, os.O_RDWR)
	}
	if err != nil {
		return nil, fmt.Errorf("open lock: %w", err)
	}
	deadline := time.Now().Add(wait)
	delay := time.Millisecond
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if errors.Is(err, unix.ENOLCK) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EINVAL) {
			// No locking here at all: carry on without kernel-backed liveness.
			return &Lock{file: f, Honoured: false}, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("lock %s: held by another process for %s; is %s using this directory?", path, wait, holder)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, context.Cause(ctx))
		case <-time.After(delay):
		}
		delay = min(delay*2, 100*time.Millisecond)
	}
	return &Lock{file: f, Honoured: lockEnforced(path)}, nil
}

// createLocked creates file already locked: a temporary file is written
// and locked, then linked into place (link fails if the name exists, where
// rename would replace it). Nobody ever sees the file unlocked while its
// creator lives, so a lock file that exists and is free means its creator
// is gone.
func (d *Dir) createLocked(file string, content []byte) (l *Lock, err error) {
	path := d.join(file)
	tmp, err := d.createTemp(file)
	if err != nil {
		var pathErr *fs.PathError
		if errors.As(err, &pathErr) {
			err = pathErr.Err
		}
		return nil, fmt.Errorf("create lock %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	defer func() {
		if err != nil {
			tmp.Close()
		}
	}()
	if err = tmp.Chmod(filePerm); err != nil {
		return nil, fmt.Errorf("create lock: %w", err)
	}
	if _, err = tmp.Write(content); err != nil {
		return nil, fmt.Errorf("create lock: %w", err)
	}
	honoured := true
	if err = unix.Flock(int(tmp.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if !errors.Is(err, unix.ENOLCK) && !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.EINVAL) {
			return nil, fmt.Errorf("create lock: %w", err)
		}
		honoured, err = false, nil
	}
	if err = os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		return nil, fmt.Errorf("create lock: %w", err)
	}
	return &Lock{file: tmp, Honoured: honoured && lockEnforced(path)}, nil
}

// lockEnforced checks that a second open file description cannot take a
// shared lock while we hold the exclusive one.
func lockEnforced(path string) bool {
	probe, err := openNoFollow(path, os.O_RDONLY)
	if err != nil {
		return false
	}
	defer probe.Close()
	err = unix.Flock(int(probe.Fd()), unix.LOCK_SH|unix.LOCK_NB)
	if err == nil {
		unix.Flock(int(probe.Fd()), unix.LOCK_UN)
		return false
	}
	return errors.Is(err, unix.EWOULDBLOCK)
}

// Release drops the lock. Closing the descriptor is what releases it, as
// process death would.
func (l *Lock) Release() error { return l.file.Close() }

// JobLockHeld reports whether a live process holds job.lock. It does not
// block. A missing lock file means no job-signal ever ran here.
func (d *Dir) JobLockHeld() (bool, error) { return d.lockHeld(JobLockFile) }

// JobLockRestartPolicy is the restart policy the job-signal that created
// job.lock was given, for when it died before writing job.state; Never
// (sidecars stop) when the file does not say.
func (d *Dir) JobLockRestartPolicy() string {
	var info jobLockInfo
	if data, err := d.readMarker(JobLockFile); err == nil && info.UnmarshalText(data) == nil {
		return info.restartPolicy
	}
	return RestartNever
}

// JobLockExists reports whether a job-signal has ever run here.
func (d *Dir) JobLockExists() bool {
	_, err := os.Lstat(d.join(JobLockFile))
	return err == nil
}

// SidecarAlive reports whether the sidecar-watch that wrote s still runs.
// It can only tell where its lock is honoured (s.Liveness is flock); it
// says true otherwise.
func (d *Dir) SidecarAlive(s SidecarState) bool {
	if s.Liveness != LivenessFlock {
		return true
	}
	held, err := d.lockHeld(SidecarLockFile(s.Name))
	return held || err != nil
}

func (d *Dir) lockHeld(file string) (bool, error) {
	f, err := openNoFollow(d.join(file), os.O_RDONLY)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("check lock: %w", err)
	}
	defer f.Close()
	err = unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("check lock %s: %w", f.Name(), err)
	}
	unix.Flock(int(f.Fd()), unix.LOCK_UN)
	return false, nil
}

// WaitJobLockFree returns a channel that receives once job.lock is free: at
// once if it is free now, otherwise when its holder releases it or dies.
// It waits in the kernel (a blocking flock in its own goroutine), so an idle
// sidecar costs no wake-ups. A blocked flock cannot be interrupted; when the
// caller loses interest it simply stops reading the channel, and the
// goroutine ends when the lock is released (at the latest when job-signal's
// container ends). The lock is taken shared and dropped at once, so a new
// job-signal attempt is never held up.
func (d *Dir) WaitJobLockFree() <-chan error {
	free := make(chan error, 1)
	f, err := openNoFollow(d.join(JobLockFile), os.O_RDONLY)
	if err != nil {
		free <- fmt.Errorf("wait for lock: %w", err)
		return free
	}
	go func() {
		defer f.Close()
		var err error
		for {
			err = unix.Flock(int(f.Fd()), unix.LOCK_SH)
			if !errors.Is(err, unix.EINTR) {
				break
			}
		}
		if err == nil {
			unix.Flock(int(f.Fd()), unix.LOCK_UN)
		} else {
			err = fmt.Errorf("wait for lock %s: %w", f.Name(), err)
		}
		free <- err
	}()
	return free
}

// openNoFollow opens a file of the protocol: never through a symlink, never
// blocking on a FIFO, and only if it is a regular file.
func openNoFollow(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, filePerm)
	if errors.Is(err, unix.ELOOP) {
		return nil, fmt.Errorf("open %s: is a symlink; markers are never followed through links", path)
	}
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = fmt.Errorf("open %s: not a regular file (%s)", path, info.Mode().Type())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
