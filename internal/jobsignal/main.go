// Package jobsignal is the job-signal program: it wraps a Job's main
// command, holds it at a ready gate until named sidecars are ready, runs it
// as a proper parent, and on every exit path writes the done marker that
// tells the sidecars (run under sidecar-watch) to stop.
package jobsignal

import (
	"io"
	"os"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/job-signal/job-signal/internal/cli"
	"github.com/job-signal/job-signal/internal/proc"
	"github.com/job-signal/job-signal/internal/version"
	"github.com/job-signal/job-signal/signalfs"
)

const description = `Run a Kubernetes Job's main command so that its sidecars (wrapped by
sidecar-watch) start first and stop when the command is done.

job-signal waits until the sidecars named by --wait-for report ready, runs
COMMAND, passes signals on to it, and exits with its exit code. On every way
out it writes a done marker into the shared directory (--dir), which each
sidecar-watch sees within milliseconds, so the sidecars stop and the Pod can
complete.

Examples:
  job-signal --wait-for proxy -- /app/migrate --all
  job-signal install /var/run/job-signal/bin     # in an init container
  job-signal status                               # what the directory says

Every flag can also be set by the environment variable shown in [brackets].
Exit codes: COMMAND's own; 128+N if signal N killed it; 127 not found;
126 not executable; 2 bad usage; 125 job-signal itself failed (such as a
ready timeout or an unwritable directory).

Run 'job-signal run --help' for the flags of the main use.`

// CLI is job-signal's command line.
type CLI struct {
	cli.LogOptions

	Run     RunCmd     `cmd:"" default:"withargs" help:"Run COMMAND after the sidecars are ready (the default: 'run' may be left out)."`
	Install InstallCmd `cmd:"" help:"Copy job-signal and sidecar-watch into DIR (for an init container; needs no shell)."`
	Status  StatusCmd  `cmd:"" help:"Print the state of the job and its sidecars, as the shared directory records it."`
	Version VersionCmd `cmd:"" help:"Print the version."`
}

// VersionCmd prints the version.
type VersionCmd struct{}

// Run prints the version.
func (VersionCmd) Run(env *cli.Env) error {
	_, err := io.WriteString(env.Stdout, "job-signal "+version.String()+"\n")
	return err
}

// Main runs job-signal with args (without the program name) and returns
// its exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	var c CLI
	args = withRunCommand(args)
	var signals chan os.Signal
	if args[0] == "run" {
		var stop func()
		signals, stop = cli.CatchSignals(proc.ForwardedSignals())
		defer stop()
	}
	onParseError := func(err error) {
		if args[0] == "run" {
			recordEarlyFailure(dirFromArgs(args), cli.ExitUsage, err)
		}
	}
	return cli.Main("job-signal", description, &c, args, stdout, stderr, onParseError, func(k *kong.Context) error {
		return k.Run(&cli.Env{Log: c.Logger(stderr, "job-signal"), Stdout: stdout, Stderr: stderr, Signals: signals})
	})
}

// subcommands are job-signal's commands, as the first argument.
var subcommands = map[string]bool{"run": true, "install": true, "status": true, "version": true}

// withRunCommand makes the default command explicit. kong would otherwise
// take a COMMAND named like a subcommand after "--" (job-signal -- status)
// for that subcommand. Without a "--", a first argument that is not a
// subcommand (a flag, or COMMAND itself) also means run.
func withRunCommand(args []string) []string {
	for _, a := range args {
		if subcommands[a] {
			return args
		}
		if a == "--" {
			break
		}
	}
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
		return args // the overview, not run's help
	}
	return append([]string{"run"}, args...)
}

// dirFromArgs finds the directory a run that could not be parsed meant,
// so that its failure can still be recorded there.
func dirFromArgs(args []string) string {
	for i, a := range args {
		if a == "--" {
			break
		}
		if v, ok := strings.CutPrefix(a, "--dir="); ok {
			return v
		}
		if a == "--dir" && i+1 < len(args) {
			return args[i+1]
		}
	}
	if v := os.Getenv("JOB_SIGNAL_DIR"); v != "" {
		return v
	}
	return signalfs.DefaultDir
}

// MainOS is Main with the process's own arguments and streams.
func MainOS() int { return Main(os.Args[1:], os.Stdout, os.Stderr) }
