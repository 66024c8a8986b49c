package signalfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// maxLinks bounds how many symlinks a path may go through, as the kernel's
// own limit does (ELOOP).
const maxLinks = 40

// openDir opens the directory at path, creating what is missing when create
// is set, without ever letting another container redirect it:
//
//   - The path is walked one component at a time, each opened relative to
//     the previous one (openat) with O_NOFOLLOW, so nothing can be swapped
//     for a symlink between a check and its use.
//   - The directory itself (the last component) is never a symlink.
//   - A symlink on the way is followed only where nobody but the owner of
//     its directory could have put it (the directory is not writable by
//     group or others): an administrator's /var/run -> /run, not a link
//     planted in a shared volume.
//   - Each directory created is made group-usable (0770) through its own
//     handle, whatever the umask, so parents of a --dir a/b are usable by
//     the Pod's fsGroup like the directory itself.
//
// The result is the opened directory; every later operation is relative to
// it (see Dir), so renaming or replacing the path afterwards cannot make us
// write elsewhere.
func openDir(path string, create bool) (*os.File, error) {
	if path == "" {
		return nil, errors.New("directory path is empty")
	}
	start := "."
	if filepath.IsAbs(path) {
		start = "/"
	}
	cur, err := unix.Open(start, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", start, err)
	}
	defer func() { unix.Close(cur) }() // the directory walked to last
	todo := components(path)
	walked := start
	links := 0
	for len(todo) > 0 {
		name := todo[0]
		todo = todo[1:]
		last := len(todo) == 0
		shown := filepath.Join(walked, name)
		next, link, err := step(cur, name, create, shown)
		if err != nil {
			return nil, err
		}
		if link != "" {
			if last {
				return nil, fmt.Errorf("%s: is a symlink; the shared directory is never opened through a link (give its real path)", shown)
			}
			if err := linkFollowable(cur, walked, shown); err != nil {
				return nil, err
			}
			if links++; links > maxLinks {
				return nil, fmt.Errorf("%s: %w", path, unix.ELOOP)
			}
			todo = append(components(link), todo...)
			if filepath.IsAbs(link) {
				unix.Close(cur)
				if cur, err = unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
					return nil, fmt.Errorf("open /: %w", err)
				}
				walked = "/"
			}
			continue
		}
		unix.Close(cur)
		cur = next
		walked = shown
	}
	// Reopen the directory for reading (listing), not only as a path.
	fd, err := unix.Openat(cur, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return os.NewFile(uintptr(fd), path), nil
}

// components splits a path into the names to walk; "." and empty names
// are dropped, ".." is kept (it is walked like any name).
func components(path string) []string {
	var out []string
	for _, c := range strings.Split(path, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// step opens name in the directory cur. It returns the new directory's
// handle, or the link's target when name is a symlink (not followed here).
func step(cur int, name string, create bool, shown string) (fd int, link string, err error) {
	for attempt := 0; ; attempt++ {
		var st unix.Stat_t
		err := unix.Fstatat(cur, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		switch {
		case errors.Is(err, unix.ENOENT) && create:
			if fd, err := mkdirOwn(cur, name, shown); !errors.Is(err, unix.EEXIST) || attempt > 3 {
				return fd, "", err
			}
			continue // made by someone else meanwhile: look again
		case errors.Is(err, unix.ENOENT):
			return -1, "", &fs.PathError{Op: "open", Path: shown, Err: unix.ENOENT}
		case err != nil:
			return -1, "", fmt.Errorf("%s: %w", shown, err)
		case st.Mode&unix.S_IFMT == unix.S_IFLNK:
			target, err := readlinkat(cur, name)
			if err != nil {
				return -1, "", fmt.Errorf("%s: %w", shown, err)
			}
			return -1, target, nil
		case st.Mode&unix.S_IFMT != unix.S_IFDIR:
			return -1, "", fmt.Errorf("%s is not a directory", shown)
		}
		fd, err = unix.Openat(cur, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			// Swapped for something else since the stat: look again.
			if attempt > 3 {
				return -1, "", fmt.Errorf("%s keeps changing under us: %w", shown, err)
			}
			continue
		}
		if err != nil {
			return -1, "", fmt.Errorf("%s: %w", shown, err)
		}
		return fd, "", nil
	}
}

// mkdirOwn creates name in cur and makes it group-usable through its own
// handle: a chmod by path could be redirected by a link swapped in after
// the mkdir.
func mkdirOwn(cur int, name, shown string) (int, error) {
	if err := unix.Mkdirat(cur, name, dirPerm); err != nil {
		if errors.Is(err, unix.EEXIST) {
			return -1, err
		}
		return -1, fmt.Errorf("create directory %s: %w", shown, err)
	}
	fd, err := unix.Openat(cur, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("create directory %s: %w", shown, err)
	}
	// The umask took the group's permissions away; give them back.
	if err := unix.Fchmod(fd, dirPerm); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("create directory %s: %w", shown, err)
	}
	return fd, nil
}

// linkFollowable allows a symlink in directory dir only when nobody but
// that directory's owner could have made it: dir is not writable by group
// or others. A link in a shared or world-writable directory (an emptyDir,
// /tmp) may have been planted by another container.
func linkFollowable(dir int, dirName, shown string) error {
	var st unix.Stat_t
	if err := unix.Fstat(dir, &st); err != nil {
		return fmt.Errorf("%s: %w", dirName, err)
	}
	if st.Mode&0o022 != 0 {
		return fmt.Errorf("%s: is a symlink in %s, which others can write (mode %o); not followed: give the real path", shown, dirName, st.Mode&0o7777)
	}
	return nil
}

// readlinkat reads a link's target; one longer than a path may be
// (PATH_MAX) is refused.
func readlinkat(dir int, name string) (string, error) {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(dir, name, buf)
	switch {
	case err != nil:
		return "", err
	case n == len(buf):
		return "", unix.ENAMETOOLONG
	}
	return string(buf[:n]), nil
}
