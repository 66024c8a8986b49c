package cli

import (
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode"
)

// Wrapper holds the flags job-signal and sidecar-watch share, declared
// once with one help text and one environment variable each. Both embed it.
type Wrapper struct {
	Dir          string        `name:"dir" default:"${dir}" env:"JOB_SIGNAL_DIR" placeholder:"PATH" help:"Directory shared by job-signal and the sidecar-watch of every sidecar (an emptyDir mounted in each container); created if missing (default ${default})."`
	Poll         bool          `name:"poll" env:"JOB_SIGNAL_POLL" help:"Poll the directory instead of using inotify (for filesystems where inotify events do not arrive)."`
	PollInterval time.Duration `name:"poll-interval" default:"250ms" env:"JOB_SIGNAL_POLL_INTERVAL" placeholder:"DURATION" nonzero:"" help:"How often to look at the directory when polling (default ${default})."`
	Subreaper    bool          `name:"subreaper" env:"JOB_SIGNAL_SUBREAPER" help:"When not PID 1, become a child subreaper so orphaned descendants of COMMAND are reaped here (as PID 1 they always are)."`
	TermLog      string        `name:"termination-log" default:"/dev/termination-log" env:"JOB_SIGNAL_TERMINATION_LOG" placeholder:"PATH" help:"Where to write a one-line summary for Kubernetes' termination message, if the file exists and is writable (default ${default}; empty: nowhere)."`
}

// CheckDurations checks every time.Duration flag of the struct v points to
// and of the structs it embeds: none may be negative, and one tagged
// nonzero must be positive. One rule and one wording for both programs;
// a new duration flag is checked without anyone remembering to.
func CheckDurations(v any) error {
	s := reflect.ValueOf(v).Elem()
	var err error
	eachFlag(s.Type(), false, nil, func(index []int, f reflect.StructField) {
		d, ok := s.FieldByIndex(index).Interface().(time.Duration)
		switch {
		case !ok || err != nil:
		case d < 0:
			err = fmt.Errorf("--%s: must not be negative, got %s", f.Tag.Get("name"), d)
		case d == 0 && hasTag(f, "nonzero"):
			err = fmt.Errorf("--%s: must be positive, got %s", f.Tag.Get("name"), d)
		}
	})
	return err
}

// hasTag reports whether field f has the struct tag key, even empty (cmd:"").
func hasTag(f reflect.StructField, key string) bool {
	_, ok := f.Tag.Lookup(key)
	return ok
}

// eachFlag is the one walk over a grammar's struct tags: it calls visit
// for every flag field (one with a name tag) of the struct type t and of
// the structs it embeds, and with commands of its commands too, with the
// field's index from t (for FieldByIndex). index is the path to t.
func eachFlag(t reflect.Type, commands bool, index []int, visit func([]int, reflect.StructField)) {
	for i := range t.NumField() {
		f := t.Field(i)
		at := append(index[:len(index):len(index)], i)
		switch cmd := hasTag(f, "cmd"); {
		case f.Anonymous && f.Type.Kind() == reflect.Struct, cmd && commands:
			eachFlag(f.Type, commands, at, visit)
		case f.Tag.Get("name") != "" && !hasTag(f, "arg") && !cmd && f.IsExported():
			visit(at, f)
		}
	}
}

// Flags knows which long flags of a grammar take a value, and the names
// of its commands, so that the command line can be read before kong
// parses it (Scan).
type Flags struct {
	takesValue map[string]bool // long flag name -> takes a value
	Commands   []string        // the grammar's commands, named as kong names them
}

// FlagsOf collects the flags of the struct grammar points to: its own,
// those of embedded structs and those of its commands.
func FlagsOf(grammar any) Flags {
	flags := Flags{takesValue: map[string]bool{}}
	t := reflect.TypeOf(grammar).Elem()
	eachFlag(t, true, nil, func(_ []int, f reflect.StructField) {
		flags.takesValue[f.Tag.Get("name")] = f.Type.Kind() != reflect.Bool
	})
	for i := range t.NumField() {
		if f := t.Field(i); hasTag(f, "cmd") {
			flags.Commands = append(flags.Commands, commandName(f))
		}
	}
	return flags
}

// commandName is the name kong gives the command field f: its name tag,
// or its Go name in kebab case (ShowAll: show-all).
func commandName(f reflect.StructField) string {
	if name := f.Tag.Get("name"); name != "" {
		return name
	}
	var b strings.Builder
	for i, r := range f.Name {
		if unicode.IsUpper(r) && i > 0 {
			b.WriteByte('-')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// Scanned is what a command line says before kong reads it. Flags.Scan
// is the one reading of the command line before kong's parse: what the
// programs need before parsing (job.lock's directory, the log format of a
// usage error, the word that may be a mistyped command) and what kong is
// given (Kong, through MainScanned).
type Scanned struct {
	// Values holds the last value given to each flag, as kong keeps it.
	Values map[string]string
	// Cmd is the grammar's command the line names: its first word that is
	// neither a flag nor a flag's value, when that word names one. Empty
	// when it names none.
	Cmd string
	// Command is COMMAND's first word: the first word that is neither a
	// flag, a flag's value nor Cmd, before any "--". Empty when there is
	// none or it starts after "--".
	Command string
	// Help is the index of the first -h or --help before COMMAND; -1 if
	// none.
	Help int
	// Missing: a flag before COMMAND whose value is missing because the
	// next word is itself one of our flags. That is what an empty shell
	// variable makes of "--dir $DIR --wait-for proxy", and kong would take
	// "--wait-for" for the directory and "proxy" for COMMAND.
	Missing error
	// Kong is the command line to give kong: a flag's value that starts
	// with "-" (a negative duration: --grace -1s) joined to it
	// (--grace=-1s), so that kong does not take it for a short flag.
	// COMMAND's own words are left as they are.
	Kong []string
}

// Value is a flag's value as kong will have it: the last one given, else
// its environment variable's, else def.
func (sc Scanned) Value(flag, env, def string) string {
	if v, ok := sc.Values[flag]; ok {
		return v
	}
	if v := os.Getenv(env); v != "" {
		return v
	}
	return def
}

// Scan reads args (without the program name) as kong will, in one pass.
// A flag that takes a value takes the next word, unless that word is "--"
// or one of our flags (then its value is Missing). The first word that is
// neither a flag nor a flag's value is a command (Cmd), if it names one,
// and the second such word, or the first that names none, starts COMMAND:
// from there on, or from "--", every word is COMMAND's, whatever it looks
// like.
func (fl Flags) Scan(args []string) Scanned {
	sc := Scanned{Values: map[string]string{}, Help: -1, Kong: make([]string, 0, len(args))}
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		name, value, hasValue := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			if sc.Cmd == "" && slices.Contains(fl.Commands, a) {
				sc.Cmd = a
				sc.Kong = append(sc.Kong, a)
				continue // COMMAND, if any, comes after it
			}
			sc.Command = a
			break
		}
		switch {
		case a == "-h" || a == "--help":
			if sc.Help < 0 {
				sc.Help = i
			}
		case hasValue:
			sc.Values[name] = value
		case fl.takesValue[name] && i+1 < len(args) && args[i+1] != "--": // long: a short flag's name keeps its "-"
			next := args[i+1]
			nextName, _, _ := strings.Cut(strings.TrimPrefix(next, "--"), "=")
			if _, ours := fl.takesValue[nextName]; ours && strings.HasPrefix(next, "--") {
				if sc.Missing == nil {
					sc.Missing = fmt.Errorf("--%s has no value: the next word, %s, is a flag (an empty variable? write --%s=VALUE)", name, next, name)
				}
				break
			}
			sc.Values[name] = next
			i++
			if !strings.HasPrefix(next, "-") {
				sc.Kong = append(sc.Kong, a, next)
				continue
			}
			a += "=" + next
		}
		sc.Kong = append(sc.Kong, a)
	}
	sc.Kong = append(sc.Kong, args[i:]...)
	return sc
}

// Default is the line with cmd, the grammar's default command, given to
// kong first when the line names no command: kong would otherwise take a
// COMMAND named like a command after "--" (job-signal -- status) for that
// command.
func (sc Scanned) Default(cmd string) Scanned {
	if sc.Cmd == "" {
		sc.Cmd, sc.Kong = cmd, append([]string{cmd}, sc.Kong...)
	}
	return sc
}

// LogFormat is the log format the command line asks for.
func (sc Scanned) LogFormat() string { return sc.Value("log-format", "JOB_SIGNAL_LOG_FORMAT", "text") }

// After returns a channel that fires once d has passed, or nil (never
// ready) when d is 0, meaning no limit: the one way both programs wait
// with an optional limit. A timer nobody refers to any more is collected
// whether it fired or not, so there is nothing to release.
func After(d time.Duration) <-chan time.Time {
	if d <= 0 {
		return nil
	}
	return time.After(d)
}
