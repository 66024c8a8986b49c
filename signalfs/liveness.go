package signalfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// LockState is what a lock file says about its holder.
type LockState int

const (
	LockAbsent  LockState = iota // no lock file: its writer never ran here
	LockHeld                     // a live process holds it
	LockFree                     // it exists and nobody holds it: its writer is gone
	LockUnknown                  // it cannot be checked (an error, or liveness=none)
)

func (s LockState) String() string {
	return [...]string{"absent", "held", "free", "unknown"}[s]
}

// lockState checks file's lock without blocking.
func (d *Dir) lockState(file string) (LockState, error) {
	fd, err := d.openFD(file, os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		return LockAbsent, nil
	}
	if err != nil {
		return LockUnknown, fmt.Errorf("check lock: %w", err)
	}
	defer unix.Close(fd)
	err = flockFD(fd, unix.LOCK_SH|unix.LOCK_NB)
	switch {
	case errors.Is(err, unix.EWOULDBLOCK):
		return LockHeld, nil
	case err != nil:
		return LockUnknown, fmt.Errorf("check lock %s: %w", d.join(file), err)
	}
	flockFD(fd, unix.LOCK_UN)
	return LockFree, nil
}

// WaitLockFree returns a channel that receives once file's lock is free: at
// once if it is free (or missing) now, otherwise when its holder releases it
// or dies. It waits in the kernel (a blocking flock in its own goroutine),
// so waiting costs no wake-ups. A blocked flock cannot be interrupted; when
// the caller loses interest it simply stops reading the channel, and the
// goroutine ends when the lock is released (at the latest when the holder's
// container ends). The lock is taken shared and dropped at once, so a new
// holder is never held up for long (see readersGone).
func (d *Dir) WaitLockFree(file string) <-chan error {
	free := make(chan error, 1)
	f, err := d.openFile(file, os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		free <- nil
		return free
	}
	if err != nil {
		free <- fmt.Errorf("wait for lock: %w", err)
		return free
	}
	go func() {
		defer f.Close()
		err := flock(f, unix.LOCK_SH)
		if err == nil {
			flock(f, unix.LOCK_UN)
		} else {
			err = fmt.Errorf("wait for lock %s: %w", f.Name(), err)
		}
		free <- err
	}()
	return free
}

// kindLock is the kind of job.lock's record, which holds the restart
// policy its job-signal was given (LockJob writes it).
const kindLock = "lock"

// jobLockPolicy is the restart policy the job-signal that created job.lock
// was given, for when it died before writing job.state; "" when the file
// does not say (it was created in a full directory, or is not ours).
func (d *Dir) jobLockPolicy() string {
	data, err := d.readMarker(JobLockFile)
	if err != nil {
		return ""
	}
	r, err := parseRecord(data, kindLock)
	if err != nil {
		return ""
	}
	return r.oneOf("restart-policy", true, RestartNever, RestartOnFailure) // "" when missing or not one
}
