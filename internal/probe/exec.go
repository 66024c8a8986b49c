package probe

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/job-signal/job-signal/internal/proc"
	"github.com/job-signal/job-signal/signalfs/sidecarspec"
)

// outputLimit bounds what is kept of a readiness command's output: enough
// for the message that says why the sidecar is not ready.
const outputLimit = 4 << 10

// Exec is ready when a command exits 0, as a Kubernetes exec probe
// (pg_isready for PostgreSQL, whose port accepts connections during crash
// recovery, before it accepts queries). The command runs directly, never
// through a shell, in a process group of its own that is killed at the
// check's deadline.
type Exec struct{ Argv []string }

// NewExec parses a --ready-exec value by sidecarspec's rule.
func NewExec(v string) (Exec, error) {
	argv, err := sidecarspec.Exec(v)
	if err != nil {
		return Exec{}, err
	}
	return Exec{Argv: argv}, nil
}

func (p Exec) Check(ctx context.Context) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	child, err := proc.Start(p.Argv, proc.Options{Output: w})
	w.Close()
	if err != nil {
		return err
	}
	// Read at most outputLimit, then drain so the command never blocks on
	// a full pipe; the read ends when every writer is gone.
	out := make(chan string, 1)
	go func() {
		data, _ := io.ReadAll(io.LimitReader(r, outputLimit))
		io.Copy(io.Discard, r)
		out <- strings.TrimSpace(string(data))
	}()
	select {
	case <-child.Done():
	case <-ctx.Done():
		proc.KillGroup(child.PID())
		<-child.Done()
		r.Close() // a process that left the group may hold the pipe
		return fmt.Errorf("%s: no answer within the probe's time limit (killed)", p)
	}
	// Whatever the command started in its group goes with it.
	proc.KillGroup(child.PID())
	var output string
	select {
	case output = <-out:
	case <-ctx.Done(): // a process outside the group holds the pipe
		r.Close()
		output = <-out
	}
	status := child.Status()
	if status.ExitCode() == 0 {
		return nil
	}
	if output != "" {
		return fmt.Errorf("%s: %s: %s", p, status, output)
	}
	return fmt.Errorf("%s: %s", p, status)
}

func (p Exec) String() string { return "exec " + strings.Join(p.Argv, " ") }
