package jobsignal

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"syscall"
	"time"

	"github.com/job-signal/job-signal/internal/cli"
	"github.com/job-signal/job-signal/internal/proc"
	"github.com/job-signal/job-signal/internal/version"
	"github.com/job-signal/job-signal/signalfs"
	"github.com/job-signal/job-signal/signalfs/sidecarname"
)

// RunCmd runs the Job's main command.
type RunCmd struct {
	cli.Wrapper

	WaitFor       []string      `name:"wait-for" sep:"none" env:"JOB_SIGNAL_WAIT_FOR" placeholder:"NAME,..." help:"Sidecars (their sidecar-watch --name) that must be ready before COMMAND starts."`
	ReadyTimeout  time.Duration `name:"ready-timeout" default:"5m" env:"JOB_SIGNAL_READY_TIMEOUT" placeholder:"DURATION" help:"Give up waiting for --wait-for after this long (default ${default}; 0: wait for ever). COMMAND then never runs, and the error names each sidecar that was not ready and why."`
	RestartPolicy string        `name:"restart-policy" enum:"Never,OnFailure" default:"Never" env:"JOB_SIGNAL_RESTART_POLICY" help:"The Pod's restartPolicy: Never or OnFailure. Under OnFailure a failed attempt leaves the sidecars running for the next one."`
	// Hidden: for tests, which cannot wait ten seconds for a line.
	ProgressInterval time.Duration `name:"progress-interval" hidden:"" default:"10s" nonzero:"" env:"JOB_SIGNAL_PROGRESS_INTERVAL" placeholder:"DURATION" help:"How often the ready gate logs what it still waits for (default ${default})."`
	SignalGroup      bool          `name:"signal-group" env:"JOB_SIGNAL_SIGNAL_GROUP" help:"Forward signals to COMMAND's whole process group, not only to COMMAND."`

	// waitFor is WaitFor parsed, set by Validate.
	waitFor []string

	Command []string `arg:"" optional:"" passthrough:"partial" name:"COMMAND" help:"The main command and its arguments. Put '--' before it when it starts with '-' or is named like a job-signal subcommand."`
}

// Validate checks what kong's tags cannot; kong calls it after parsing,
// and its errors are usage errors (exit 2) naming the flag.
func (c *RunCmd) Validate() error { return cli.Invalid(c.validate()) }

func (c *RunCmd) validate() error {
	if len(cli.Command(c.Command)) == 0 {
		return errors.New("missing COMMAND: give the command to run after the flags, e.g. job-signal -- /app/run")
	}
	var err error
	if c.waitFor, err = sidecarname.ParseList(c.WaitFor); err != nil {
		return fmt.Errorf("--wait-for: %w", err)
	}
	return cli.CheckDurations(c)
}

// runner is one run of COMMAND. Its methods are called from one goroutine.
type runner struct {
	cfg     *RunCmd
	log     *slog.Logger
	dir     *signalfs.Dir
	lock    *signalfs.Lock // held until after the done marker; released by the kernel if we die
	state   signalfs.JobState
	signals chan os.Signal
	started time.Time
	// success is the done marker of a success, written ahead: if the done
	// marker cannot be written when COMMAND succeeds (no space left), a
	// rename puts this one in place, and the sidecars stop.
	success *signalfs.Reserved
	// terminating is set once job-signal has been told to stop (TERM, INT
	// or QUIT); job.state records it for people.
	terminating bool
}

// Run is job-signal's main path. Every way out after the directory is
// usable writes the done marker.
func (c *RunCmd) Run(env *cli.Env, e *early) error {
	if e != nil && e.err != nil {
		return cli.Exit(cli.ExitFailure, cli.DirError(c.Dir, e.err))
	}
	proc.SetUpReaping(c.Subreaper, env.Log)
	// env.Signals were caught from the start (Main), so a TERM during
	// start-up cannot kill us before the done marker is written.
	r := &runner{cfg: c, log: env.Log, signals: env.Signals, started: time.Now()}
	r.dir, r.lock = e.take(c.Dir)
	if r.dir == nil {
		if err := r.attach(); err != nil {
			return err
		}
	}
	defer func() { r.lock.Release(); r.dir.Close() }()

	r.state = signalfs.JobState{
		Attempt:       1,
		Phase:         signalfs.JobWaiting,
		PID:           os.Getpid(),
		RestartPolicy: c.RestartPolicy,
		Liveness:      r.lock.Liveness(),
		Version:       version.String(),
		WaitFor:       c.waitFor,
		Started:       r.started,
	}
	if !r.lock.Honoured {
		r.log.Warn("flock is not enforced on this filesystem: if job-signal is killed (SIGKILL, OOM) the sidecars will not notice", "dir", c.Dir)
	}
	previous, found, err := r.dir.ReadJob()
	switch {
	case err != nil:
		r.log.Warn("previous job state unreadable; starting from attempt 1", "err", err)
	case found:
		r.state.Attempt = previous.Attempt + 1
		if previous.Phase == signalfs.JobDone && previous.RestartPolicy == signalfs.RestartNever && c.RestartPolicy == signalfs.RestartNever {
			r.log.Warn("a previous attempt finished here under --restart-policy Never, so its sidecars have stopped; if the Pod's restartPolicy is OnFailure, pass --restart-policy OnFailure",
				"previousAttempt", previous.Attempt, "previousExitCode", previous.ExitCode)
		}
	}
	if err := r.write(); err != nil {
		return cli.Exit(cli.ExitFailure, cli.DirError(c.Dir, err))
	}
	r.reserveSuccess()
	defer func() { r.success.Discard() }()
	r.log.Info("job starting", "attempt", r.state.Attempt, "dir", c.Dir, "waitFor", c.waitFor, "restartPolicy", c.RestartPolicy)

	if len(c.waitFor) > 0 {
		if err := r.readyGate(c.waitFor); err != nil {
			return err
		}
	}
	return r.runCommand(cli.Command(c.Command))
}

// attach opens (making it if need be) the directory and takes job.lock.
func (r *runner) attach() error {
	dir, err := signalfs.Open(r.cfg.Dir, true)
	if err != nil {
		return cli.Exit(cli.ExitFailure, cli.DirError(r.cfg.Dir, err))
	}
	lock, err := dir.LockJob(r.cfg.RestartPolicy)
	if err != nil {
		dir.Close()
		return cli.Exit(cli.ExitFailure, cli.DirError(r.cfg.Dir, err))
	}
	r.dir, r.lock = dir, lock
	return nil
}

// reserveSuccess writes the done marker of a success ahead of time.
func (r *runner) reserveSuccess() {
	success := r.state
	success.Phase, success.ExitCode, success.Reason = signalfs.JobDone, 0, signalfs.ReasonExited
	success.Message = "written ahead at start: the done marker could not be written when COMMAND exited 0 (no space left?)"
	var err error
	if r.success, err = r.dir.ReserveJob(success); err != nil {
		r.log.Warn("cannot write the success marker ahead; a success in a full directory would not reach the sidecars", "err", err)
	}
}

// write records the job's state. If the directory was replaced meanwhile
// (--dir, a subdirectory, removed and made again), the run carries on in
// the new one, where the sidecars look.
func (r *runner) write() error {
	if r.dir.Replaced() {
		r.log.Warn("the directory was replaced (removed, maybe made again); carrying on in the directory now at its path", "dir", r.cfg.Dir)
		r.lock.Release()
		r.dir.Close()
		r.success.Discard()
		r.success = nil
		if err := r.attach(); err != nil {
			return err
		}
		r.state.Liveness = r.lock.Liveness() // the new directory's filesystem may differ
	}
	r.state.Updated = time.Now()
	return r.dir.WriteJob(r.state)
}

// runCommand starts COMMAND, forwards signals until it ends, and writes the
// done marker with its exit code.
func (r *runner) runCommand(command []string) error {
	foreground := proc.OwnsTerminal()
	started := time.Now() // what COMMAND writes comes after its start
	child, err := proc.Start(command, proc.Options{Foreground: foreground})
	if err != nil {
		code, ok := proc.ExitCode(err)
		if !ok {
			return r.finish(cli.ExitFailure, signalfs.ReasonError, "", fmt.Errorf("start COMMAND: %w", err))
		}
		reason := signalfs.ReasonNotExecutable
		if code == proc.ExitNotFound {
			reason = signalfs.ReasonNotFound
			err = fmt.Errorf("%w%s", err, commandHint(command))
		}
		return r.finish(code, reason, "", err)
	}
	r.state.Phase = signalfs.JobRunning
	r.state.ChildPID = child.PID()
	if err := r.write(); err != nil {
		// Sidecars do not need "running"; the done marker is what matters.
		r.log.Warn("could not record that COMMAND is running", "err", err)
	}
	cli.LogAt(r.log, started, slog.LevelInfo, "command started", "pid", child.PID(), "command", command)

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
	written := time.Now() // the sidecars act on the marker before this is logged
	switch err := r.write(); {
	case err == nil:
		cli.LogAt(r.log, written, slog.LevelInfo, "done marker written", "exitCode", code, "reason", reason, "signal", sigName, "elapsed", elapsed)
	case code == 0 && r.success != nil && r.success.Commit() == nil:
		// The rename needs no space: the sidecars learn of the success.
		r.success = nil
		r.log.Warn("could not write the done marker; put the success marker written at start in its place", "err", err)
	default:
		// The exit code still comes back; the sidecars learn of the end
		// from the lock we release when we exit, as of a failure.
		r.log.Error("could not write the done marker", "err", err)
	}
	summary := fmt.Sprintf("job-signal: attempt %d %s (exit code %d) after %s", r.state.Attempt, describe(reason, sigName), code, elapsed)
	if cause != nil {
		summary += ": " + cause.Error()
	}
	cli.TerminationLog(r.cfg.TermLog, summary, r.log)
	return cli.Exit(code, cause)
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
