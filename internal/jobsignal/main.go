// Package jobsignal is the job-signal program: it wraps a Job's main
// command, holds it at a ready gate until named sidecars are ready, runs it
// as a proper parent, and on every exit path writes the done marker that
// tells the sidecars (run under sidecar-watch) to stop. ARCHITECTURE.md
// says which file does what.
package jobsignal

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/job-signal/job-signal/internal/cli"
	"github.com/job-signal/job-signal/internal/proc"
	"github.com/job-signal/job-signal/internal/version"
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
  job-signal install /var/run/job-signal-bin     # in an init container
  job-signal status                               # what the directory says

Every flag can also be set by the environment variable shown after its
help, as ($VARIABLE).
Exit codes: COMMAND's own; 128+N if signal N killed it; 127 not found;
126 not executable; 2 bad usage; 125 job-signal itself failed (such as a
ready timeout or an unwritable directory).

Run 'job-signal run --help' for the flags of the main use.`

// CLI is job-signal's command line.
type CLI struct {
	cli.LogOptions
	VersionFlag kong.VersionFlag `name:"version" help:"Print the version and exit."`

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

// cliFlags are job-signal's flags and commands, for reading the command
// line before kong does.
var cliFlags = cli.FlagsOf(&CLI{})

// subcommands are job-signal's commands, as the first argument.
var subcommands = cliFlags.Commands

// notCommands are words people try as a subcommand that job-signal does
// not have; as the first word they are refused rather than run as COMMAND.
var notCommands = map[string]string{
	"help":       "for help run 'job-signal --help'",
	"completion": "job-signal has no shell completion",
	"man":        "job-signal has no man page; see 'job-signal --help' and the README",
	"inject":     "inject is a command of the kubectl plugin: kubectl job-signal inject",
	"uninject":   "uninject is a command of the kubectl plugin: kubectl job-signal uninject",
}

// Main runs job-signal with args (without the program name) and returns
// its exit code.
func Main(args []string, stdout, stderr io.Writer) int { return run(args, stdout, stderr, false) }

// MainOS is Main with the process's own arguments and streams, for a
// process that exits with the code returned: the signals it catches stay
// caught until then (letting go of them costs a round trip to the
// runtime's signal thread for each, at every exit).
func MainOS() int { return run(os.Args[1:], os.Stdout, os.Stderr, true) }

func run(args []string, stdout, stderr io.Writer, processEnds bool) int {
	var c CLI
	// The one reading of the command line before kong's parse, which is
	// given it.
	sc := cliFlags.Scan(args)
	var signals chan os.Signal
	var e *early
	if runs(sc) {
		// Caught from the start, so that a TERM in the first milliseconds
		// cannot kill job-signal once it has written anything but
		// job.lock: set up meanwhile, waited for below.
		catching := cli.CatchSignalsSoon(proc.Forwarded)
		if !processEnds {
			defer catching.Stop()
		}
		if sc.Missing != nil {
			return cli.ReportUsage("job-signal", sc, stderr, sc.Missing)
		}
		if err := refuseMistypedCommand(sc.Command); err != nil {
			return cli.ReportUsage("job-signal", sc, stderr, err)
		}
		// Before anything else: see early.go.
		e = lockEarly(sc)
		defer e.release()
		signals = catching.Signals()
		sc = sc.Default("run")
	}
	return cli.MainScanned("job-signal", description, &c, sc, stdout, stderr, e.recordUsageFailure, func(k *kong.Context) error {
		return k.Run(&cli.Env{Log: c.Logger(stderr, "job-signal"), Stdout: stdout, Stderr: stderr, Signals: signals}, e)
	})
}

// runs says whether a command line is for run, the default command: it
// names run or no other command, and it does not start with -h or --help
// (the overview, not run's help).
func runs(sc cli.Scanned) bool {
	return sc.Cmd == "run" || sc.Cmd == "" && sc.Help != 0
}

// refuseMistypedCommand refuses COMMAND's first word, before any "--", that looks
// like a mistyped subcommand (job-signal stauts) or is one people try
// (help, completion, man, inject) rather than COMMAND: run as COMMAND it
// would touch the directory, and even overwrite a real job's result. A
// path, or a program found in PATH that is not one of those words, is
// COMMAND; after "--" everything is.
func refuseMistypedCommand(word string) error {
	if word == "" || strings.Contains(word, "/") {
		return nil
	}
	if hint, ok := notCommands[word]; ok {
		return fmt.Errorf("unknown command %q: %s (to run a program called %q as the job, put -- before it)", word, hint, word)
	}
	if _, err := exec.LookPath(word); err == nil {
		return nil
	}
	if near, ok := cli.Nearest(word, subcommands); ok {
		return fmt.Errorf("unknown command %q, did you mean %q? (to run a program called %q as the job, put -- before it)", word, near, word)
	}
	return nil
}

// commandHint is said when COMMAND is not found and its name is close to a
// subcommand: after "--" it was taken for COMMAND, as it must be.
func commandHint(command []string) string {
	if len(command) == 0 || strings.Contains(command[0], "/") {
		return ""
	}
	if near, ok := cli.Nearest(command[0], subcommands); ok {
		return fmt.Sprintf(" (after -- %q is the job's COMMAND; did you mean 'job-signal %s'?)", command[0], near)
	}
	if slices.Contains(subcommands, command[0]) {
		return fmt.Sprintf(" (after -- %q is the job's COMMAND; for the subcommand leave out the --)", command[0])
	}
	return ""
}
