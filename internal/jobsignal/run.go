package jobsignal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"syscall"
	"time"

	"github.com/job-signal/job-signal/internal/cli"
	"github.com/job-signal/job-signal/internal/proc"
	"github.com/job-signal/job-signal/signalfs"
)

// RunCmd runs the Job's main command.
type RunCmd struct {
	Dir           string        `name:"dir" default:"${dir}" env:"JOB_SIGNAL_DIR" placeholder:"PATH" help:"Directory shared with the sidecars (an emptyDir mounted in every container). Created if missing (default ${default})."`
	WaitFor       []string      `name:"wait-for" sep:"none" env:"JOB_SIGNAL_WAIT_FOR" placeholder:"NAME,..." help:"Sidecars (their sidecar-watch --name) that must be ready before COMMAND starts."`
	ReadyTimeout  time.Duration `name:"ready-timeout" default:"5m" env:"JOB_SIGNAL_READY_TIMEOUT" placeholder:"DURATION" help:"Give up waiting for --wait-for after this long (default ${default}; 0: wait for ever). COMMAND then never runs, the sidecars are told to stop, and the error names each sidecar that was not ready and why."`
	RestartPolicy string        `name:"restart-policy" enum:"Never,OnFailure" default:"Never" env:"JOB_SIGNAL_RESTART_POLICY" help:"The Pod's restartPolicy: Never or OnFailure. Under OnFailure a failed attempt leaves the sidecars running for the next one."`
	SignalGroup   bool          `name:"signal-group" env:"JOB_SIGNAL_SIGNAL_GROUP" help:"Forward signals to COMMAND's whole process group, not only to COMMAND."`
	Subreaper     bool          `name:"subreaper" env:"JOB_SIGNAL_SUBREAPER" help:"When not PID 1, become a child subreaper so orphaned descendants of COMMAND are reaped here. As PID 1 orphans are always reaped."`
	Poll          bool          `name:"poll" env:"JOB_SIGNAL_POLL" help:"Poll the directory instead of using inotify (for filesystems where inotify events do not arrive)."`
	PollInterval  time.Duration `name:"poll-interval" default:"250ms" env:"JOB_SIGNAL_POLL_INTERVAL" placeholder:"DURATION" help:"How often to look at the directory when polling (default ${default})."`
	TermLog       string        `name:"termination-log" default:"/dev/termination-log" env:"JOB_SIGNAL_TERMINATION_LOG" placeholder:"PATH" help:"Where to write a one-line summary for Kubernetes' termination message, if the file exists and is writable (default ${default}; empty: do not)."`

	// waitFor is WaitFor parsed, set by check.
	waitFor []string

	Command []string `arg:"" optional:"" passthrough:"partial" name:"COMMAND" help:"The main command and its arguments. Put '--' before it when it starts with '-' or is named like a job-signal subcommand."`
}

// check validates what kong's tags cannot; errors name the flag and are
// usage errors (exit 2).
func (c *RunCmd) check() error {
	if len(cli.Command(c.Command)) == 0 {
		return errors.New("missing COMMAND: give the command to run after the flags, e.g. job-signal -- /app/run")
	}
	var err error
	if c.waitFor, err = signalfs.ParseNames(c.WaitFor); err != nil {
		return fmt.Errorf("--wait-for: %w", err)
	}
	if c.ReadyTimeout < 0 {
		return fmt.Errorf("--ready-timeout: must not be negative, got %s", c.ReadyTimeout)
	}
	if c.PollInterval <= 0 {
		return fmt.Errorf("--poll-interval: must be positive, got %s", c.PollInterval)
	}
	return nil
}

// runner is one run of COMMAND. Its methods are called from one goroutine.
type runner struct {
	cfg     *RunCmd
	log     *slog.Logger
	dir     *signalfs.Dir
	state   signalfs.JobState
	signals chan os.Signal
	started time.Time
	// terminating is set once job-signal has been told to stop (TERM, INT
	// or QUIT): the Pod is going away, so even a failure under OnFailure ends
	// the sidecars.
	terminating bool
}

// Run is job-signal's main path. Every way out after the directory is
// usable writes the done marker.
func (c *RunCmd) Run(env *cli.Env) error {
	// Signals are caught from the start (Main), so a TERM during start-up
	// cannot kill us before the done marker is written.
	signals, stop := env.CaughtSignals(proc.ForwardedSignals())
	defer stop()

	if err := c.check(); err != nil {
		recordEarlyFailure(c.Dir, cli.ExitUsage, err)
		return cli.Exit(cli.ExitUsage, err)
	}
	log := env.Log
	command := cli.Command(c.Command)
	waitFor := c.waitFor
	proc.SetUpReaping(c.Subreaper, log)

	dir, err := signalfs.Open(c.Dir, true)
	if err != nil {
		return cli.Failf("--dir %s: %w", c.Dir, err)
	}
	lock, err := dir.LockJob(context.Background(), 10*time.Second, c.RestartPolicy)
	if err != nil {
		return cli.Failf("--dir %s: %w", c.Dir, err)
	}
	// Released after the done marker is written, or by the kernel if we die.
	defer lock.Release()

	r := &runner{cfg: c, log: log, dir: dir, signals: signals, started: time.Now()}
	r.state = signalfs.JobState{
		Attempt:       1,
		Phase:         signalfs.JobWaiting,
		PID:           os.Getpid(),
		RestartPolicy: c.RestartPolicy,
		Liveness:      signalfs.LivenessFlock,
		WaitFor:       waitFor,
		Started:       r.started,
	}
	if !lock.Honoured {
		r.state.Liveness = signalfs.LivenessNone
		log.Warn("flock is not enforced on this filesystem: if job-signal is killed (SIGKILL, OOM) the sidecars will not notice", "dir", c.Dir)
	}
	previous, found, err := dir.ReadJob()
	switch {
	case err != nil:
		log.Warn("previous job state unreadable; starting from attempt 1", "err", err)
	case found:
		r.state.Attempt = previous.Attempt + 1
		if previous.Phase == signalfs.JobDone && previous.RestartPolicy == signalfs.RestartNever && c.RestartPolicy == signalfs.RestartNever {
			log.Warn("a previous attempt finished here under --restart-policy Never, so its sidecars have stopped; if the Pod's restartPolicy is OnFailure, pass --restart-policy OnFailure",
				"previous_attempt", previous.Attempt, "previous_exit_code", previous.ExitCode)
		}
	}
	if err := r.write(); err != nil {
		return cli.Failf("--dir %s is not usable: %w (it must be writable by uid %d)", c.Dir, err, os.Getuid())
	}
	log.Info("job starting", "attempt", r.state.Attempt, "dir", c.Dir, "wait_for", waitFor, "restart_policy", c.RestartPolicy)

	if len(waitFor) > 0 {
		if err := r.readyGate(waitFor); err != nil {
			return err
		}
	}
	return r.runCommand(command)
}

func (r *runner) write() error {
	r.state.Updated = time.Now()
	return r.dir.WriteJob(r.state)
}

// runCommand starts COMMAND, forwards signals until it ends, and writes the
// done marker with its exit code.
func (r *runner) runCommand(command []string) error {
	foreground := proc.OwnsTerminal()
	child, err := proc.Start(command, proc.Options{Foreground: foreground})
	if err != nil {
		var execErr *proc.ExecError
		if !errors.As(err, &execErr) {
			return r.finish(cli.ExitFailure, signalfs.ReasonError, "", fmt.Errorf("start COMMAND: %w", err))
		}
		reason := signalfs.ReasonNotExecutable
		if execErr.Code == proc.ExitNotFound {
			reason = signalfs.ReasonNotFound
		}
		return r.finish(execErr.Code, reason, "", err)
	}
	r.state.Phase = signalfs.JobRunning
	r.state.ChildPID = child.PID()
	if err := r.write(); err != nil {
		// Sidecars do not need "running"; the done marker is what matters.
		r.log.Warn("could not record that COMMAND is running", "err", err)
	}
	r.log.Info("command started", "pid", child.PID(), "command", command)

	for {
		select {
		case sig := <-r.signals:
			r.forward(child, sig.(syscall.Signal))
		case <-child.Done():
			if foreground {
				proc.ReclaimTerminal()
			}
			status := child.Status()
			reason, sigName := signalfs.ReasonExited, ""
			if status.Signal != 0 {
				reason, sigName = signalfs.ReasonSignaled, proc.SignalName(status.Signal)
			}
			return r.finish(status.ExitCode(), reason, sigName, nil)
		}
	}
}

func (r *runner) forward(child *proc.Child, sig syscall.Signal) {
	if proc.IsTermination(sig) {
		r.terminating = true
	}
	send, target := child.Signal, "command"
	if r.cfg.SignalGroup {
		send, target = child.SignalGroup, "process group"
	}
	if err := send(sig); err != nil {
		r.log.Warn("could not forward signal", "signal", proc.SignalName(sig), "to", target, "err", err)
		return
	}
	r.log.Info("forwarded signal", "signal", proc.SignalName(sig), "to", target, "pid", child.PID())
}

// finish writes the done marker and the termination message and returns
// the error that makes job-signal exit with code. cause is job-signal's own
// failure, nil when COMMAND ran and its code is passed through.
func (r *runner) finish(code int, reason, sigName string, cause error) error {
	r.state.Phase = signalfs.JobDone
	r.state.ExitCode = code
	r.state.Reason = reason
	r.state.Signal = sigName
	r.state.Terminating = r.terminating
	if cause != nil {
		r.state.Message = cause.Error()
	}
	elapsed := time.Since(r.started).Round(time.Millisecond)
	if err := r.write(); err != nil {
		// The exit code still comes back; only the sidecars miss the
		// marker (they still see the lock released when we exit).
		r.log.Error("could not write the done marker", "err", err)
	} else {
		r.log.Info("done marker written", "exit_code", code, "reason", reason, "signal", sigName, "elapsed", elapsed)
	}
	summary := fmt.Sprintf("job-signal: attempt %d %s (exit code %d) after %s", r.state.Attempt, describe(reason, sigName), code, elapsed)
	if cause != nil {
		summary += ": " + cause.Error()
	}
	cli.TerminationLog(r.cfg.TermLog, summary, r.log)
	if cause != nil {
		return cli.Exit(code, cause)
	}
	return cli.Exit(code, nil)
}

func describe(reason, sigName string) string {
	switch reason {
	case signalfs.ReasonExited:
		return "COMMAND exited"
	case signalfs.ReasonSignaled:
		return "COMMAND was killed by SIG" + sigName
	case signalfs.ReasonNotFound:
		return "COMMAND not found"
	case signalfs.ReasonNotExecutable:
		return "COMMAND not executable"
	case signalfs.ReasonReadyTimeout:
		return "sidecars not ready in time; COMMAND not started"
	case signalfs.ReasonSidecarFailed:
		return "a sidecar failed; COMMAND not started"
	case signalfs.ReasonInterrupted:
		return "interrupted by SIG" + sigName + " before COMMAND started"
	default:
		return "failed"
	}
}

// recordEarlyFailure writes a done marker for a job-signal that fails
// before it can start (a usage error): without one, the sidecars would wait
// for ever for a job that will never run. The failure repeats on every
// restart, so the marker is final (restart policy Never) whatever the
// Pod's policy. Best effort: only into an existing directory, and never
// while another job-signal holds the lock.
func recordEarlyFailure(dirPath string, code int, cause error) {
	dir, err := signalfs.Open(dirPath, false)
	if err != nil {
		return
	}
	lock, err := dir.LockJob(context.Background(), 0, signalfs.RestartNever)
	if err != nil {
		return
	}
	defer lock.Release()
	attempt := 1
	if previous, found, err := dir.ReadJob(); err == nil && found {
		attempt = previous.Attempt + 1
	}
	now := time.Now()
	dir.WriteJob(signalfs.JobState{Attempt: attempt, Phase: signalfs.JobDone, PID: os.Getpid(),
		RestartPolicy: signalfs.RestartNever, Liveness: signalfs.LivenessFlock, Started: now, Updated: now,
		ExitCode: code, Reason: signalfs.ReasonError, Message: "job-signal: " + cause.Error()})
}
