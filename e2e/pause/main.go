// Command pause is the e2e suite's Pod sandbox image ("pause" container).
// No registry can be reached here, so the suite builds this instead of
// pulling one. As PID 1 of the sandbox it holds the Pod's namespaces open,
// reaps orphaned zombies, and exits on SIGTERM or SIGINT.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for sig := range sigs {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		reap()
	}
}

// reap collects every exited child: several may end before one SIGCHLD
// is delivered, so loop until none is left.
func reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
