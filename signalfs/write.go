package signalfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// privateDir is the writer's own hidden subdirectory (.job.tmp,
// .sidecar-NAME.tmp) for the temporary files of its atomic writes. inotify
// does not look into subdirectories, so the create, chmod and writes of an
// atomic write wake nobody: watchers see one event, the rename into place.
// Being the writer's own, it can be private (0700) even when the Pod's
// containers run as different users. It is made on first use, after the
// writer's lock exists, and opened once.
func (d *Dir) privateDir(file string) (*os.File, error) {
	owner := strings.TrimSuffix(strings.TrimSuffix(file, stateSuffix), lockSuffix)
	d.mu.Lock()
	defer d.mu.Unlock()
	if f := d.private[owner]; f != nil {
		return f, nil
	}
	name := tempPrefix + owner + ".tmp"
	if err := unix.Mkdirat(d.dirfd(), name, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, &fs.PathError{Op: "create temporary directory", Path: d.join(name), Err: err}
	}
	fd, err := openat(d.dirfd(), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open temporary directory", Path: d.join(name), Err: err}
	}
	f := os.NewFile(uintptr(fd), d.join(name))
	d.private[owner] = f
	return f, nil
}

// tempFile is a file written in a writer's private directory, to be renamed
// (or linked) into the shared directory.
type tempFile struct {
	dir  *os.File // the private directory
	name string
}

// writeTemp writes data into a new temporary file for the writer of name.
// The descriptor stays bare: an *os.File would cost an fcntl, an
// allocation and a finalizer on every write.
func (d *Dir) writeTemp(name string, data []byte) (tmp tempFile, err error) {
	private, err := d.privateDir(name)
	if err != nil {
		return tmp, err
	}
	tmp = tempFile{dir: private, name: name + "." + strconv.FormatUint(rand.Uint64(), 36)}
	fd, err := openat(int(private.Fd()), tmp.name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, filePerm)
	if err != nil {
		return tmp, &fs.PathError{Op: "create temporary file in", Path: d.path, Err: err}
	}
	defer func() {
		if err != nil {
			tmp.remove()
		}
	}()
	// The umask may have taken the others' read permission away.
	if err = retryEINTR(func() error { return unix.Fchmod(fd, filePerm) }); err == nil {
		err = writeAll(fd, data)
	}
	if closeErr := unix.Close(fd); err == nil {
		err = closeErr
	}
	if err != nil {
		return tmp, &fs.PathError{Op: "write temporary file in", Path: d.path, Err: err}
	}
	return tmp, nil
}

// writeAll writes data to fd, however many writes it takes.
func writeAll(fd int, data []byte) error {
	for len(data) > 0 {
		n, err := unix.Write(fd, data)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return io.ErrShortWrite
		}
		data = data[n:]
	}
	return nil
}

func (t tempFile) remove() { unix.Unlinkat(int(t.dir.Fd()), t.name, 0) }

// renameInto moves the temporary file over name. rename never follows a
// symlink at the target: a planted link is replaced, not written through.
// It needs no free space: a full directory still takes it.
func (d *Dir) renameInto(t tempFile, name string) error {
	return unix.Renameat(int(t.dir.Fd()), t.name, d.dirfd(), name)
}

// writeAtomic replaces the file name with data: a temporary file, then
// rename, so a reader sees the old content or the new, never a part. No
// fsync: the directory is an emptyDir that does not outlive its node, so a
// crash of the node loses the Pod anyway; see the package doc.
func (d *Dir) writeAtomic(name string, data []byte) error {
	tmp, err := d.writeTemp(name, data)
	if err != nil {
		return fmt.Errorf("write %s: %w", d.join(name), err)
	}
	if err := d.renameInto(tmp, name); err != nil {
		tmp.remove()
		return fmt.Errorf("write %s: %w", d.join(name), err)
	}
	return nil
}

// Reserved is a marker written ahead of time, put in place later by a
// rename: the one write that still works when the directory has no free
// space left.
type Reserved struct {
	d   *Dir
	tmp tempFile
}

// ReserveJob writes s now, to put in place as job.state later with Commit.
func (d *Dir) ReserveJob(s JobState) (*Reserved, error) {
	data, err := s.MarshalText()
	if err != nil {
		return nil, err
	}
	tmp, err := d.writeTemp(JobStateFile, data)
	if err != nil {
		return nil, fmt.Errorf("reserve %s: %w", d.join(JobStateFile), err)
	}
	return &Reserved{d: d, tmp: tmp}, nil
}

// Commit puts the reserved marker in place. It allocates nothing.
func (r *Reserved) Commit() error {
	if err := r.d.renameInto(r.tmp, JobStateFile); err != nil {
		return fmt.Errorf("write %s: %w", r.d.join(JobStateFile), err)
	}
	return nil
}

// Discard removes the reserved marker unused; on nil it does nothing.
func (r *Reserved) Discard() {
	if r != nil {
		r.tmp.remove()
	}
}
