// Package cli holds what job-signal's programs share as programs: parsing
// with kong (Main, for all four front ends), logging with slog, and the one
// place where errors become exit codes. wrapper.go holds what only the two
// wrappers, job-signal and sidecar-watch, need.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/alecthomas/kong"

	"github.com/job-signal/job-signal/internal/version"
	"github.com/job-signal/job-signal/signalfs"
)

// Exit codes of the wrappers themselves. A wrapped command's own code is
// passed through unchanged and never collides with these in meaning: 2 and
// 125 are only used when the command did not run.
const (
	ExitUsage   = 2   // bad flags or arguments
	ExitFailure = 125 // the wrapper failed (unwritable directory, ready timeout...)
)

// ExitError carries the exit code a run ends with. With a nil Err nothing is
// printed: the code is the wrapped command's own.
type ExitError struct {
	Code int
	Err  error
	Help string // where to read more, said after the error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit code %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Exit returns an error that ends the program with code; err (which may be
// nil) is printed as the reason.
func Exit(code int, err error) error { return &ExitError{Code: code, Err: err} }

// Failf reports a failure of the wrapper itself (exit code 125).
func Failf(format string, args ...any) error {
	return &ExitError{Code: ExitFailure, Err: fmt.Errorf(format, args...)}
}

// Format is the log format asked for.
func (o LogOptions) Format() string { return o.LogFormat }

// LogOptions are the logging flags both programs take.
type LogOptions struct {
	LogFormat string `name:"log-format" enum:"text,json" default:"text" env:"JOB_SIGNAL_LOG_FORMAT" help:"Log format on stderr: text or json."`
	LogLevel  string `name:"log-level" enum:"debug,info,warn,error" default:"info" env:"JOB_SIGNAL_LOG_LEVEL" help:"Least important log level shown: debug, info, warn or error."`
}

// Logger builds the slog logger the flags ask for.
func (o LogOptions) Logger(w io.Writer, program string) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(o.LogLevel))
	hopts := &slog.HandlerOptions{Level: level, ReplaceAttr: valuesAsText}
	var h slog.Handler = slog.NewTextHandler(w, hopts)
	if o.LogFormat == "json" {
		h = slog.NewJSONHandler(w, hopts)
	}
	return slog.New(h).With("prog", program)
}

// LogAt logs msg as having happened at: for an event logged once its
// effects may be under way already (a signal sent, a process started, a
// marker written), so that its record is not stamped after theirs.
func LogAt(log *slog.Logger, at time.Time, level slog.Level, msg string, args ...any) {
	ctx := context.Background()
	if !log.Enabled(ctx, level) {
		return
	}
	r := slog.NewRecord(at, level, msg, 0)
	r.Add(args...)
	_ = log.Handler().Handle(ctx, r) // as slog.Logger.Log does: a handler's error is not the caller's
}

// valuesAsText writes every duration as Go writes it ("5m0s"), in text
// and JSON alike: slog's JSON handler would write nanoseconds. One
// convention for every log line, whoever logs it.
//
// It also gives the level as the string it is written as: with a
// ReplaceAttr, slog passes the level on as any value, which its JSON
// handler then writes through encoding/json, on every line.
func valuesAsText(_ []string, a slog.Attr) slog.Attr {
	switch a.Value.Kind() {
	case slog.KindDuration:
		a.Value = slog.StringValue(a.Value.Duration().String())
	case slog.KindAny:
		if l, ok := a.Value.Any().(slog.Level); ok {
			a.Value = slog.StringValue(l.String())
		}
	}
	return a
}

// Env is what every command's Run method receives.
type Env struct {
	Log    *slog.Logger
	Stdout io.Writer
	Stderr io.Writer
	// Signals receives the signals a wrapper forwards, caught from the
	// very start of the program (see CatchSignals): the pair's Mains set
	// it for every command that runs a child.
	Signals chan os.Signal
}

// exitPanic is how kong's exit (after --help) unwinds back to Main.
type exitPanic struct{ code int }

// Main parses args into grammar and runs the selected command with run. It
// returns the exit code; it never calls os.Exit, so tests can run it
// in-process. onParseError, if not nil, is told about arguments that do
// not parse.
func Main(program, description string, grammar any, args []string, stdout, stderr io.Writer, onParseError func(error), run func(*kong.Context) error) int {
	return MainScanned(program, description, grammar, FlagsOf(grammar).Scan(args), stdout, stderr, onParseError, run)
}

// MainScanned is Main for a program that read its command line before
// kong's parse, and gives kong that one reading (sc, Flags.Scan's of
// grammar's flags) instead of args.
func MainScanned(program, description string, grammar any, sc Scanned, stdout, stderr io.Writer, onParseError func(error), run func(*kong.Context) error) (code int) {
	defer func() {
		if p := recover(); p != nil {
			if e, ok := p.(exitPanic); ok {
				code = e.code
				return
			}
			panic(p)
		}
	}()
	err := sc.Missing
	var kctx *kong.Context
	if err == nil {
		kctx, err = newParser(program, description, grammar, stdout, stderr).Parse(sc.Kong)
	}
	var invalid *invalidError
	if errors.As(err, &invalid) {
		err = invalid.err // without the command path kong puts first
	}
	if err != nil {
		if onParseError != nil {
			onParseError(err)
		}
		// The help of the command the line is for: job-signal's top-level
		// help does not list run's flags.
		help := strings.TrimSpace(program + " " + sc.Cmd)
		return Report(program, sc.LogFormat(), stderr, &ExitError{Code: ExitUsage, Err: err, Help: fmt.Sprintf("Run '%s --help' for usage.", help)})
	}
	format := "text"
	if f, ok := grammar.(interface{ Format() string }); ok {
		format = f.Format()
	}
	return Report(program, format, stderr, run(kctx))
}

// newParser builds kong's model of the command line grammar describes.
func newParser(program, description string, grammar any, stdout, stderr io.Writer) *kong.Kong {
	parser, err := kong.New(grammar,
		kong.Name(program),
		// The description is the model's only when help is printed:
		// kong interpolates what it is given at every start, and the
		// description is the longest text of all.
		kong.Help(func(options kong.HelpOptions, ctx *kong.Context) error {
			ctx.Model.Help = description
			return kong.DefaultHelpPrinter(options, ctx)
		}),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { panic(exitPanic{code}) }),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true, WrapUpperBound: 100}),
		// The variables the programs' struct tags may use (${dir}, ${image}).
		kong.Vars{"dir": signalfs.DefaultDir, "version": program + " " + version.String(), "image": version.Image},
	)
	if err != nil {
		// The grammar is ours: a mistake in it is a bug.
		panic(err)
	}
	return parser
}

// invalidError is a Validate hook's error.
type invalidError struct{ err error }

func (e *invalidError) Error() string { return e.err.Error() }
func (e *invalidError) Unwrap() error { return e.err }

// Invalid marks err, from a Validate hook, as the usage error to report as
// it is; nil stays nil.
func Invalid(err error) error {
	if err == nil {
		return nil
	}
	return &invalidError{err}
}

// Report is the one place where an error becomes an exit code, and says
// why on stderr: a line for people, or with --log-format json one JSON
// record at level ERROR, like every other line then.
func Report(program, format string, stderr io.Writer, err error) int {
	if err == nil {
		return 0
	}
	var exit *ExitError
	if !errors.As(err, &exit) {
		exit = &ExitError{Code: ExitFailure, Err: err}
	}
	if exit.Err == nil {
		return exit.Code
	}
	if format == "json" {
		args := []any{"err", exit.Err.Error(), "exitCode", exit.Code}
		if exit.Help != "" {
			args = append(args, "help", exit.Help)
		}
		LogOptions{LogFormat: "json", LogLevel: "error"}.Logger(stderr, program).Error(program+" failed", args...)
		return exit.Code
	}
	fmt.Fprintf(stderr, "%s: error: %s\n", program, exit.Err)
	if exit.Help != "" {
		fmt.Fprintln(stderr, exit.Help)
	}
	return exit.Code
}

// ReportUsage reports a usage error found before kong ran, in the format
// the command line asks for (sc, Flags.Scan's), and returns the usage exit
// code.
func ReportUsage(program string, sc Scanned, stderr io.Writer, err error) int {
	return Report(program, sc.LogFormat(), stderr, Exit(ExitUsage, err))
}
