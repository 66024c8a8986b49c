package signalfs

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

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
