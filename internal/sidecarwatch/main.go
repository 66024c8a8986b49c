// Package sidecarwatch is the sidecar-watch program: it wraps a sidecar's
// command, reports it ready, and stops it (its whole process group) when
// the job run by job-signal is done, then exits 0 so the Pod can succeed.
//
// Who does what: ARCHITECTURE.md (its files, and the table of states and
// transitions state.go follows). One event loop owns all the state, one
// value of state.go's life, and changes it only through its pure next.
package sidecarwatch

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"syscall"
	"time"

	"github.com/alecthomas/kong"

	"github.com/job-signal/job-signal/internal/cli"
	"github.com/job-signal/job-signal/internal/probe"
	"github.com/job-signal/job-signal/internal/proc"
	"github.com/job-signal/job-signal/internal/version"
	"github.com/job-signal/job-signal/signalfs"
	"github.com/job-signal/job-signal/signalfs/sidecarname"
	"github.com/job-signal/job-signal/signalfs/sidecarspec"
)

const description = `Run a sidecar of a Kubernetes Job so that it stops when the Job's main
command (run by job-signal) is done, and the Pod can complete.

sidecar-watch starts COMMAND, reports it ready to job-signal (after the
--ready-* check passes, or at once), and watches the shared directory
(--dir). When the job is done it stops COMMAND's whole process group
(--quit-url, then --stop-signal, then SIGKILL after --grace) and exits 0,
whatever code the stopped sidecar exits with.

Examples:
  sidecar-watch --name proxy --ready-tcp 127.0.0.1:5432 -- /cloud-sql-proxy db
  sidecar-watch --name envoy --quit-url http://127.0.0.1:15000/quitquitquit \
      --stop-after app-logs -- /usr/local/bin/envoy -c /etc/envoy.yaml

Every flag can also be set by the environment variable shown after its
help, as ($VARIABLE).
Exit codes: 0 when the sidecar was stopped because the job was done or the
Pod is terminating; 2 bad usage; 125 sidecar-watch itself failed; with
--restart Never, the sidecar's own code if it ended by itself.`

// Cmd is sidecar-watch's command line.
type Cmd struct {
	cli.LogOptions
	cli.Wrapper
	Version kong.VersionFlag `name:"version" help:"Print the version and exit ('sidecar-watch version' too)."`

	Name string `name:"name" required:"" env:"SIDECAR_WATCH_NAME" placeholder:"NAME" help:"This sidecar's name, as job-signal --wait-for and other sidecars' --after/--stop-after refer to it: a DNS label such as 'proxy'."`

	ReadyTCP      string        `name:"ready-tcp" xor:"ready" env:"SIDECAR_WATCH_READY_TCP" placeholder:"HOST:PORT" help:"Ready once HOST:PORT accepts a TCP connection."`
	ReadyHTTP     string        `name:"ready-http" xor:"ready" env:"SIDECAR_WATCH_READY_HTTP" placeholder:"URL" help:"Ready once a GET of URL answers 2xx."`
	ReadyFile     string        `name:"ready-file" xor:"ready" env:"SIDECAR_WATCH_READY_FILE" placeholder:"PATH" help:"Ready once PATH exists."`
	ReadyExec     string        `name:"ready-exec" xor:"ready" env:"SIDECAR_WATCH_READY_EXEC" placeholder:"COMMAND" help:"Ready once COMMAND exits 0, as a Kubernetes exec probe: a JSON array such as '[\"pg_isready\",\"-h\",\"127.0.0.1\"]' or words separated by spaces, run without a shell, killed after --probe-timeout; its output (the first 4 KiB) says why the sidecar is not ready. Without any --ready-* flag the sidecar is ready as soon as COMMAND has started."`
	ReadyInterval time.Duration `name:"ready-interval" default:"100ms" nonzero:"" env:"SIDECAR_WATCH_READY_INTERVAL" placeholder:"DURATION" help:"Longest pause between readiness checks until one passes; the first pauses are shorter (from 5ms, doubling) so a fast sidecar is seen at once (default ${default})."`
	ProbeTimeout  time.Duration `name:"probe-timeout" default:"1s" nonzero:"" env:"SIDECAR_WATCH_PROBE_TIMEOUT" placeholder:"DURATION" help:"Time limit of one readiness check (default ${default})."`

	After            []string      `name:"after" sep:"none" env:"SIDECAR_WATCH_AFTER" placeholder:"NAME,..." help:"Start COMMAND only once these sidecars are ready."`
	AfterTimeout     time.Duration `name:"after-timeout" default:"5m" env:"SIDECAR_WATCH_AFTER_TIMEOUT" placeholder:"DURATION" help:"Give up waiting for --after sidecars after this long (default ${default}; 0: no limit)."`
	StopAfter        []string      `name:"stop-after" sep:"none" env:"SIDECAR_WATCH_STOP_AFTER" placeholder:"NAME,..." help:"When the job is done, stop only after these sidecars have stopped (a proxy stops last)."`
	StopAfterTimeout time.Duration `name:"stop-after-timeout" default:"30s" env:"SIDECAR_WATCH_STOP_AFTER_TIMEOUT" placeholder:"DURATION" help:"Stop anyway when --stop-after sidecars have not stopped after this long (default ${default}; 0: no limit)."`

	JobStartTimeout time.Duration `name:"job-start-timeout" default:"0s" env:"SIDECAR_WATCH_JOB_START_TIMEOUT" placeholder:"DURATION" help:"Stop the sidecar and fail when no job-signal has shown itself in the directory after this long (default ${default}: no limit; the Job's activeDeadlineSeconds bounds a Pod whose main container never starts). A warning is logged after a minute either way."`

	StopSignal  string        `name:"stop-signal" default:"TERM" env:"SIDECAR_WATCH_STOP_SIGNAL" placeholder:"SIGNAL" help:"Signal that stops the sidecar: TERM, INT, QUIT, HUP, USR1, USR2 or KILL, with or without SIG (default ${default}). Graceful stops: nginx QUIT, haproxy USR1, pgbouncer INT, PostgreSQL INT; TERM cuts their in-flight work. Received by sidecar-watch, this signal means the Pod is terminating, like TERM, INT and QUIT: the runtime sends the image's STOPSIGNAL."`
	Grace       time.Duration `name:"grace" default:"10s" env:"SIDECAR_WATCH_GRACE" placeholder:"DURATION" help:"How long the sidecar may take to exit after --quit-url or --stop-signal before the next step (then SIGKILL to its process group and every process below it). Also how long a terminating Pod's sidecar keeps serving while the job finishes (default ${default})."`
	QuitURL     string        `name:"quit-url" env:"SIDECAR_WATCH_QUIT_URL" placeholder:"URL" help:"POST here first to stop the sidecar (Envoy/Istio http://127.0.0.1:15000/quitquitquit, cloud-sql-proxy with --quitquitquit: its admin port's /quitquitquit); fall back to --stop-signal if it fails or the sidecar has not exited within --grace."`
	QuitTimeout time.Duration `name:"quit-timeout" default:"2s" nonzero:"" env:"SIDECAR_WATCH_QUIT_TIMEOUT" placeholder:"DURATION" help:"Time limit of the --quit-url request (default ${default})."`

	Restart           string        `name:"restart" enum:"Always,Never" default:"Always" env:"SIDECAR_WATCH_RESTART" help:"When COMMAND ends by itself before the job is done: Always restarts it with exponential back-off (like native sidecars); Never exits with its code."`
	RestartBackoff    time.Duration `name:"restart-backoff" default:"1s" nonzero:"" env:"SIDECAR_WATCH_RESTART_BACKOFF" placeholder:"DURATION" help:"First delay before a restart; it doubles after each quick failure (default ${default})."`
	RestartBackoffMax time.Duration `name:"restart-backoff-max" default:"30s" nonzero:"" env:"SIDECAR_WATCH_RESTART_BACKOFF_MAX" placeholder:"DURATION" help:"Longest delay before a restart (default ${default})."`

	Command []string `arg:"" optional:"" passthrough:"partial" name:"COMMAND" help:"The sidecar's command and its arguments; put '--' before it."`

	// Parsed forms, set by Validate.
	after, stopAfter []string
	stopSignal       syscall.Signal
	probe            probe.Probe
	quit             probe.HTTP
}

// Validate checks what kong's tags cannot; kong calls it after parsing, and
// its errors are usage errors (exit 2) naming the flag.
func (c *Cmd) Validate() error { return cli.Invalid(c.validate()) }

func (c *Cmd) validate() error {
	if c.Name == "" {
		// kong checks required flags after this hook.
		return errors.New("missing flags: --name=NAME: the sidecar's name, as job-signal --wait-for refers to it")
	}
	var err error
	if err = signalfs.ValidName(c.Name); err != nil {
		return fmt.Errorf("--name: %w", err)
	}
	if len(cli.Command(c.Command)) == 0 {
		return errors.New("missing COMMAND: give the sidecar's command after '--', e.g. sidecar-watch --name proxy -- /proxy")
	}
	if c.after, err = c.names("--after", c.After); err != nil {
		return err
	}
	if c.stopAfter, err = c.names("--stop-after", c.StopAfter); err != nil {
		return err
	}
	if c.stopSignal, err = sidecarspec.StopSignal(c.StopSignal); err != nil {
		return fmt.Errorf("--stop-signal: %w", err)
	}
	switch {
	case c.ReadyTCP != "":
		if c.probe, err = probe.NewTCP(c.ReadyTCP); err != nil {
			return fmt.Errorf("--ready-tcp: %w", err)
		}
	case c.ReadyHTTP != "":
		if c.probe, err = probe.NewHTTP(c.ReadyHTTP); err != nil {
			return fmt.Errorf("--ready-http: %w", err)
		}
	case c.ReadyFile != "":
		if _, err = sidecarspec.File(c.ReadyFile); err != nil {
			return fmt.Errorf("--ready-file: %w", err)
		}
		c.probe = probe.File{Path: c.ReadyFile}
	case c.ReadyExec != "":
		if c.probe, err = probe.NewExec(c.ReadyExec); err != nil {
			return fmt.Errorf("--ready-exec: %w", err)
		}
	}
	if c.QuitURL != "" {
		if c.quit, err = probe.NewHTTP(c.QuitURL); err != nil {
			return fmt.Errorf("--quit-url: %w", err)
		}
	}
	return cli.CheckDurations(c)
}

func (c *Cmd) names(flag string, list []string) ([]string, error) {
	names, err := sidecarname.ParseList(list)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	if slices.Contains(names, c.Name) {
		return nil, fmt.Errorf("%s: %q is this sidecar's own --name", flag, c.Name)
	}
	return names, nil
}

// cmdFlags are sidecar-watch's flags, for reading the command line before
// kong does.
var cmdFlags = cli.FlagsOf(&Cmd{})

// Main runs sidecar-watch with args (without the program name) and returns
// its exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	var c Cmd
	// The one reading of the command line before kong's parse, which is
	// given it.
	sc := cmdFlags.Scan(args)
	if sc.Command == "version" && len(sc.Kong) == 1 {
		fmt.Fprintln(stdout, "sidecar-watch "+version.String())
		return 0
	}
	signals, stop := cli.CatchSignals(proc.Forwarded)
	defer stop()
	onParseError := func(err error) { recordUsageFailure(sc, err) }
	return cli.MainScanned("sidecar-watch", description, &c, sc, stdout, stderr, onParseError, func(*kong.Context) error {
		return c.Run(&cli.Env{Log: c.Logger(stderr, "sidecar-watch").With("sidecar", c.Name), Stdout: stdout, Stderr: stderr, Signals: signals})
	})
}

// recordUsageFailure records a sidecar-watch that cannot start because of
// its command line as failed, when its name and directory are usable: the
// job's ready gate and the other sidecars' --after then fail at once with
// the message, instead of waiting out their timeouts for a sidecar that
// will never report. Best effort: only into an existing directory, and
// never over a live sidecar-watch of that name.
func recordUsageFailure(sc cli.Scanned, cause error) {
	name := sc.Value("name", "SIDECAR_WATCH_NAME", "")
	if signalfs.ValidName(name) != nil {
		return
	}
	dir, err := signalfs.Open(sc.Value("dir", "JOB_SIGNAL_DIR", signalfs.DefaultDir), false)
	if err != nil {
		return
	}
	defer dir.Close()
	lock, err := dir.LockSidecar(name)
	if err != nil {
		return
	}
	defer lock.Release()
	dir.WriteSidecar(signalfs.SidecarState{Name: name, Phase: signalfs.SidecarFailed, PID: os.Getpid(),
		Liveness: signalfs.LivenessFlock, ExitCode: -1, LastError: "sidecar-watch usage error: " + cause.Error(), Updated: time.Now()})
}

// MainOS is Main with the process's own arguments and streams.
func MainOS() int { return Main(os.Args[1:], os.Stdout, os.Stderr) }
