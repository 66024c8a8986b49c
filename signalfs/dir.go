package signalfs

import (
	"encoding"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
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

// SidecarStateFile is the file name holding the named sidecar's state.
func SidecarStateFile(name string) string { return sidecarPrefix + name + stateSuffix }

// SidecarLockFile is the file the named sidecar's sidecar-watch holds a
// flock on while it runs.
func SidecarLockFile(name string) string { return sidecarPrefix + name + lockSuffix }

// sidecarName returns the sidecar name a file name belongs to, if any.
func sidecarName(file string) (string, bool) {
	name, ok := strings.CutPrefix(file, sidecarPrefix)
	if !ok {
		return "", false
	}
	name, ok = strings.CutSuffix(name, stateSuffix)
	if !ok || ValidName(name) != nil {
		return "", false
	}
	return name, true
}

// Dir is the shared directory. Its methods are safe for concurrent use.
type Dir struct {
	path string
}

// Open returns the directory at path, creating it (and its parents) when
// create is set and it does not exist. The path itself may be a symlink (an
// administrator's choice); the marker files inside it never are followed.
func Open(path string, create bool) (*Dir, error) {
	if path == "" {
		return nil, errors.New("directory path is empty")
	}
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) && create {
		if err := os.MkdirAll(path, dirPerm); err != nil {
			return nil, fmt.Errorf("create directory: %w", err)
		}
		// The umask would take the group's write permission away.
		if err := os.Chmod(path, dirPerm); err != nil {
			return nil, fmt.Errorf("create directory: %w", err)
		}
		info, err = os.Stat(path)
	}
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", path)
	}
	return &Dir{path: path}, nil
}

// Path is the directory's path.
func (d *Dir) Path() string { return d.path }

func (d *Dir) join(name string) string { return filepath.Join(d.path, name) }

// writeAtomic replaces the file name with data: a temporary file beside it,
// then rename, so a reader sees the old content or the new, never a part.
// No fsync: the directory is an emptyDir that does not outlive its node, so
// a crash of the node loses the Pod anyway; see the package doc.
func (d *Dir) writeAtomic(name string, data []byte) (err error) {
	tmp, err := d.createTemp(name)
	if err != nil {
		return fmt.Errorf("write %s: %w", d.join(name), err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(filePerm); err != nil {
		return fmt.Errorf("write %s: %w", d.join(name), err)
	}
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", d.join(name), err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", d.join(name), err)
	}
	// rename never follows a symlink at the target: a planted link is
	// replaced, not written through.
	if err = os.Rename(tmp.Name(), d.join(name)); err != nil {
		return fmt.Errorf("write %s: %w", d.join(name), err)
	}
	return nil
}

// createTemp creates a temporary file for the writer of name, in that
// writer's own hidden subdirectory (.job.tmp, .sidecar-NAME.tmp). inotify
// does not look into subdirectories, so the create, chmod and writes of an
// atomic write wake nobody: watchers see one event, the rename into place.
// Being the writer's own, the subdirectory can be private (0700) even when
// the Pod's containers run as different users.
func (d *Dir) createTemp(name string) (*os.File, error) {
	owner := strings.TrimSuffix(strings.TrimSuffix(name, stateSuffix), lockSuffix)
	private := d.join(tempPrefix + owner + ".tmp")
	tmp, err := os.CreateTemp(private, name+".*")
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.Mkdir(private, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		tmp, err = os.CreateTemp(private, name+".*")
	}
	if err != nil {
		// Name the directory we write to, not the temporary file.
		var pathErr *fs.PathError
		if errors.As(err, &pathErr) {
			err = &fs.PathError{Op: "create temporary file in", Path: d.path, Err: pathErr.Err}
		}
		return nil, err
	}
	return tmp, nil
}

// readMarker reads a marker file without following symlinks and without
// blocking on FIFOs, and refuses anything that is not a small regular file.
// A missing file returns an error wrapping fs.ErrNotExist.
func (d *Dir) readMarker(name string) ([]byte, error) {
	path := d.join(name)
	f, err := openNoFollow(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxMarkerSize+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > MaxMarkerSize {
		return nil, fmt.Errorf("read %s: %w: larger than %d bytes", path, ErrMalformed, MaxMarkerSize)
	}
	return data, nil
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
	entries, err := os.ReadDir(d.path)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", d.path, err)
	}
	var names []string
	for _, e := range entries {
		if name, ok := sidecarName(e.Name()); ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names, nil
}
