package proc

import (
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// OwnsTerminal reports whether stdin is a terminal whose foreground process
// group is ours (kubectl run -it, tty: true, a shell). A child started in a
// process group of its own must then be made the foreground group, or its
// first read from the terminal stops it with SIGTTIN.
func OwnsTerminal() bool {
	pgrp, err := unix.IoctlGetInt(0, unix.TIOCGPGRP)
	return err == nil && pgrp == unix.Getpgrp()
}

// ReclaimTerminal makes our process group the terminal's foreground group
// again after a foreground child ended. We are in the background at that
// point, where changing the foreground group raises SIGTTOU: it is ignored
// from then on.
func ReclaimTerminal() {
	signal.Ignore(syscall.SIGTTOU)
	unix.IoctlSetPointerInt(0, unix.TIOCSPGRP, unix.Getpgrp())
}
