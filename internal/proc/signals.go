package proc

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// Forwarded are the signals a wrapper passes on to its child. SIGCHLD is
// the wrapper's own business and SIGURG is the Go runtime's preemption
// signal: neither is ever forwarded.
var Forwarded = []os.Signal{
	unix.SIGTERM, unix.SIGINT, unix.SIGHUP, unix.SIGQUIT, unix.SIGUSR1, unix.SIGUSR2,
}

// IsTermination reports whether sig asks the process to end: TERM (the
// kubelet's default), INT, or QUIT (the STOPSIGNAL of images such as nginx
// and php-fpm, which the runtime sends instead of TERM).
func IsTermination(sig syscall.Signal) bool {
	return sig == unix.SIGTERM || sig == unix.SIGINT || sig == unix.SIGQUIT
}
