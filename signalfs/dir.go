package signalfs

import (
	"encoding"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/job-signal/job-signal/signalfs/sidecarname"
)

// DefaultDir is where the shared directory is mounted unless --dir says
// otherwise.
const DefaultDir = "/var/run/job-signal"

// File names in the directory. Temporary files start with a dot and are
// never read.
const (
	JobStateFile  = "job.state"
	JobLockFile   = "job.lock"
	sidecarPrefix = "sidecar-"
	stateSuffix   = ".state"
	lockSuffix    = ".lock"
	tempPrefix    = "."
)

// Permissions. Containers of one Pod may run as different users (an
// injected istio-proxy runs as 1337), and each must read the others'
// files, which hold nothing secret: files are readable by all and
// writable by their one writer only. A directory we create is shared with
// the group (a Pod's fsGroup); an emptyDir's own root is world-writable.
const (
	dirPerm  = 0o770
	filePerm = 0o644
)

// ValidName reports whether name can name a sidecar; see sidecarname.Valid.
func ValidName(name string) error { return sidecarname.Valid(name) }

// SidecarStateFile is the file name holding the named sidecar's state.
func SidecarStateFile(name string) string { return sidecarPrefix + name + stateSuffix }

// SidecarLockFile is the file the named sidecar's sidecar-watch holds a
// flock on while it runs.
func SidecarLockFile(name string) string { return sidecarPrefix + name + lockSuffix }

// Dir is the shared directory, opened once: every file operation is
// relative to that handle (openat, renameat, linkat), never to the path,
// so nothing done to the path afterwards (a rename, a symlink swapped in)
// can make us read or write elsewhere. Its methods are safe for concurrent
// use.
type Dir struct {
	path string
	fd   *os.File

	mu      sync.Mutex
	private map[string]*os.File // each writer's temporary directory, by owner
}

// Open opens the directory at path, creating it (and its parents, group
// usable) when create is set and it does not exist. See openDir for what
// is refused: in short, the directory is never reached through a symlink
// that another container could have planted.
func Open(path string, create bool) (*Dir, error) {
	fd, err := openDir(path, create)
	if err != nil {
		return nil, err
	}
	return &Dir{path: path, fd: fd, private: map[string]*os.File{}}, nil
}

// Close releases the directory's handles. Locks taken in it stay held.
func (d *Dir) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for owner, f := range d.private {
		f.Close()
		delete(d.private, owner)
	}
	return d.fd.Close()
}

// Path is the directory's path, as given to Open.
func (d *Dir) Path() string { return d.path }

// Replaced reports whether the path no longer names the directory this Dir
// holds: it was removed (and maybe made again). Everything written since
// went into a directory nobody else can find.
func (d *Dir) Replaced() bool {
	var held, now unix.Stat_t
	if unix.Fstat(int(d.fd.Fd()), &held) != nil {
		return false
	}
	if held.Nlink == 0 {
		return true // removed; the handle keeps it alive for us alone
	}
	if err := unix.Stat(d.path, &now); err != nil {
		return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR)
	}
	return now.Dev != held.Dev || now.Ino != held.Ino
}

func (d *Dir) dirfd() int { return int(d.fd.Fd()) }

func (d *Dir) join(name string) string { return filepath.Join(d.path, name) }

// openFile opens a file of the protocol: never through a symlink, never
// blocking on a FIFO, and only if it is a regular file. A missing file
// gives an error wrapping fs.ErrNotExist.
func (d *Dir) openFile(name string, flag int) (*os.File, error) {
	fd, err := d.openFD(name, flag)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), d.join(name)), nil
}

// openFD is openFile as a bare descriptor, for the reads that every event
// causes: an *os.File costs a finalizer, an fcntl and an attempt to add a
// regular file to the poller, on a path where every sidecar-watch of the
// Pod wakes at once.
func (d *Dir) openFD(name string, flag int) (int, error) {
	fd, err := openat(d.dirfd(), name, flag|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, filePerm)
	if errors.Is(err, unix.ELOOP) {
		return -1, fmt.Errorf("open %s: is a symlink; markers are never followed through links", d.join(name))
	}
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: d.join(name), Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, &fs.PathError{Op: "stat", Path: d.join(name), Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return -1, fmt.Errorf("open %s: not a regular file (%s)", d.join(name), fileType(st.Mode))
	}
	return fd, nil
}

// fileType names the type in a stat mode, for errors.
func fileType(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFIFO:
		return "a FIFO"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFCHR, unix.S_IFBLK:
		return "a device"
	}
	return "not a file"
}

// readMarker reads a marker file without following symlinks and without
// blocking on FIFOs, and refuses anything that is not a small regular file.
// A missing file returns an error wrapping fs.ErrNotExist.
func (d *Dir) readMarker(name string) ([]byte, error) {
	fd, err := d.openFD(name, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	buf := make([]byte, MaxMarkerSize+1)
	n := 0
	for n < len(buf) {
		m, err := unix.Read(fd, buf[n:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", d.join(name), err)
		}
		if m == 0 {
			break
		}
		n += m
	}
	if n > MaxMarkerSize {
		return nil, fmt.Errorf("read %s: %w: larger than %d bytes", d.join(name), ErrMalformed, MaxMarkerSize)
	}
	return buf[:n], nil
}

func (d *Dir) write(name string, v encoding.TextMarshaler) error {
	data, err := v.MarshalText()
	if err != nil {
		return fmt.Errorf("write %s: %w", d.join(name), err)
	}
	return d.writeAtomic(name, data)
}

// read parses a marker into v. found is false, with a nil error, when the
// file does not exist.
func (d *Dir) read(name string, v encoding.TextUnmarshaler) (found bool, err error) {
	data, err := d.readMarker(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := v.UnmarshalText(data); err != nil {
		return false, fmt.Errorf("read %s: %w", d.join(name), err)
	}
	return true, nil
}

// WriteJob replaces job.state.
func (d *Dir) WriteJob(s JobState) error { return d.write(JobStateFile, s) }

// ReadJob reads job.state; found is false when job-signal has not written it.
func (d *Dir) ReadJob() (s JobState, found bool, err error) {
	found, err = d.read(JobStateFile, &s)
	return s, found, err
}

// WriteSidecar replaces the sidecar's state file.
func (d *Dir) WriteSidecar(s SidecarState) error {
	if err := ValidName(s.Name); err != nil {
		return fmt.Errorf("write sidecar state: %w", err)
	}
	return d.write(SidecarStateFile(s.Name), s)
}

// ReadSidecar reads the named sidecar's state; found is false when its
// sidecar-watch has not written it.
func (d *Dir) ReadSidecar(name string) (s SidecarState, found bool, err error) {
	if err := ValidName(name); err != nil {
		return s, false, err
	}
	found, err = d.read(SidecarStateFile(name), &s)
	if found && s.Name != name {
		return s, false, fmt.Errorf("read %s: %w: holds name %q", d.join(SidecarStateFile(name)), ErrMalformed, s.Name)
	}
	return s, found, err
}

// SidecarNames lists the sidecars that have a state file, sorted.
func (d *Dir) SidecarNames() ([]string, error) {
	// A handle of its own: a directory's read offset is shared by all
	// users of one handle.
	fd, err := openat(d.dirfd(), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", d.path, err)
	}
	f := os.NewFile(uintptr(fd), d.path)
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", d.path, err)
	}
	var names []string
	for _, e := range entries {
		rest, isSidecar := strings.CutPrefix(e.Name(), sidecarPrefix)
		if name, isState := strings.CutSuffix(rest, stateSuffix); isSidecar && isState && ValidName(name) == nil {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names, nil
}

// retryEINTR calls call again while it fails with EINTR, which a signal
// to a Go program can cause.
func retryEINTR(call func() error) error {
	for {
		if err := call(); !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

func openat(dir int, name string, flag int, perm uint32) (fd int, err error) {
	err = retryEINTR(func() error {
		fd, err = unix.Openat(dir, name, flag, perm)
		return err
	})
	return fd, err
}
