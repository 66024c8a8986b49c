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
	var err error
	walkFlags(reflect.ValueOf(v).Elem(), func(f reflect.StructField, value reflect.Value) {
		d, ok := value.Interface().(time.Duration)
		if !ok || err != nil {
			return
		}
		t := tagsOf(f)
		switch {
		case d < 0:
			err = fmt.Errorf("--%s: must not be negative, got %s", t.name, d)
		case d == 0 && t.nonzero:
			err = fmt.Errorf("--%s: must be positive, got %s", t.name, d)
		}
	})
	return err
}

// walkFlags calls visit for each flag field (one with a name tag) of the
// struct s, descending into embedded structs.
func walkFlags(s reflect.Value, visit func(reflect.StructField, reflect.Value)) {
	t := s.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			walkFlags(s.Field(i), visit)
			continue
		}
		if t := tagsOf(f); t.name != "" && !t.arg && !t.cmd {
			visit(f, s.Field(i))
		}
	}
}

func hasTag(f reflect.StructField, key string) bool {
	_, ok := f.Tag.Lookup(key)
	return ok
}

// Flags knows which long flags of a grammar take a value, and the names
// of its commands, so that the command line can be read before kong
// parses it.
type Flags struct {
	takesValue map[string]bool // long flag name -> takes a value
	commands   []string        // the grammar's commands, named as kong names them
}

// FlagsOf collects the flags of the struct grammar points to: its own,
// those of embedded structs and those of its commands.
func FlagsOf(grammar any) Flags {
	flags := Flags{takesValue: map[string]bool{}}
	t := reflect.TypeOf(grammar).Elem()
	eachFlag(t, func(f reflect.StructField, ft tags) {
		flags.takesValue[ft.name] = f.Type.Kind() != reflect.Bool
	})
	for i := range t.NumField() {
		if f := t.Field(i); tagsOf(f).cmd {
			flags.commands = append(flags.commands, commandName(f))
		}
	}
	return flags
}

// commandName is the name kong gives the command field f: its name tag,
// or its Go name in kebab case (ShowAll: show-all).
func commandName(f reflect.StructField) string {
	if t := tagsOf(f); t.name != "" {
		return t.name
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

// argumentsStart is the index of the first word of args that kong takes
// for an argument (COMMAND): not a flag, not a flag's value, not a command
// name; or of "--"; or len(args). Every word from there on is COMMAND's
// own, whatever it looks like.
func (fl Flags) argumentsStart(args []string) int {
	commandSeen := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, isLong := strings.CutPrefix(a, "--")
		switch {
		case a == "--":
			return i
		case !strings.HasPrefix(a, "-") || a == "-":
			if commandSeen || !slices.Contains(fl.commands, a) {
				return i
			}
			commandSeen = true
		case isLong && !strings.Contains(name, "=") && fl.takesValue[name] && i+1 < len(args) && args[i+1] != "--":
			i++ // its value
		}
	}
	return len(args)
}

// eachFlag calls visit for every flag field of the struct type t, of the
// structs it embeds and of its commands.
func eachFlag(t reflect.Type, visit func(reflect.StructField, tags)) {
	for i := range t.NumField() {
		f := t.Field(i)
		switch ft := tagsOf(f); {
		case f.Anonymous && f.Type.Kind() == reflect.Struct, ft.cmd:
			eachFlag(f.Type, visit)
		case ft.name != "" && !ft.arg:
			visit(f, ft)
		}
	}
}

// Scanned is what a command line says before kong reads it.
type Scanned struct {
	// Values holds the last value given to each flag, as kong keeps it.
	Values map[string]string
	// First is the first word that is neither a flag nor a flag's value,
	// before any "--": kong takes it for a command or for COMMAND. Empty
	// when there is none.
	First string
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

// Scan reads args (without the program name) as kong will. A flag that
// takes a value takes the next word, unless that word is one of our flags
// (see MissingValue).
func (fl Flags) Scan(args []string) Scanned {
	sc := Scanned{Values: map[string]string{}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		switch {
		case !strings.HasPrefix(a, "-") || a == "-":
			sc.First = a
			return sc
		case !strings.HasPrefix(a, "--"):
			continue // a short flag (-h)
		case hasValue:
			sc.Values[name] = value
		case fl.takesValue[name] && i+1 < len(args) && !fl.isFlag(args[i+1]):
			i++
			sc.Values[name] = args[i]
		}
	}
	return sc
}

// isFlag reports whether word is one of our long flags (--name or
// --name=value).
func (fl Flags) isFlag(word string) bool {
	name, ok := strings.CutPrefix(word, "--")
	name, _, _ = strings.Cut(name, "=")
	_, known := fl.takesValue[name]
	return ok && known
}

// MissingValue finds a flag, before COMMAND or "--", whose value is
// missing: the next word is itself one of our flags. That is what an empty
// shell variable makes of "--dir $DIR --wait-for proxy", and kong would
// take "--wait-for" for the directory and "proxy" for COMMAND.
func (fl Flags) MissingValue(args []string) error {
	args = args[:fl.argumentsStart(args)]
	for i := 0; i+1 < len(args); i++ {
		name, isLong := strings.CutPrefix(args[i], "--")
		if !isLong || strings.Contains(name, "=") || !fl.takesValue[name] {
			continue
		}
		if fl.isFlag(args[i+1]) {
			return fmt.Errorf("--%s has no value: the next word, %s, is a flag (an empty variable? write --%s=VALUE)", name, args[i+1], name)
		}
		i++ // its value
	}
	return nil
}

// joinValues makes kong take a value that starts with "-" (a negative
// duration: --grace -1s) as the value it is, not as a short flag: such a
// pair becomes --grace=-1s. COMMAND's own words are left as they are.
func (fl Flags) joinValues(args []string) []string {
	start := fl.argumentsStart(args)
	out := make([]string, 0, len(args))
	for i := 0; i < start; i++ {
		a := args[i]
		name, isLong := strings.CutPrefix(a, "--")
		if isLong && !strings.Contains(name, "=") && fl.takesValue[name] && i+1 < start && strings.HasPrefix(args[i+1], "-") {
			out = append(out, a+"="+args[i+1])
			i++
			continue
		}
		out = append(out, a)
	}
	return append(out, args[start:]...)
}

// After returns a channel that fires once d has passed, or nil (never
// ready) when d is 0, meaning no limit; and the function that releases the
// timer. The one way both programs wait with an optional limit.
func After(d time.Duration) (<-chan time.Time, func() bool) {
	if d <= 0 {
		return nil, func() bool { return false }
	}
	t := time.NewTimer(d)
	return t.C, t.Stop
}

// HelpProblems checks the help texts of a grammar against what kong shows
// by itself: a default is shown by kong as --flag="X" unless the flag has a
// placeholder, so a help text says "(default ${default})" exactly when
// kong would not. Both programs' tests run it.
func HelpProblems(grammar any) []string {
	var problems []string
	eachFlag(reflect.TypeOf(grammar).Elem(), func(f reflect.StructField, t tags) {
		help, name := f.Tag.Get("help"), "--"+t.name
		_, hasDefault := f.Tag.Lookup("default")
		says := strings.Contains(help, "(default")
		switch {
		case help == "":
			problems = append(problems, name+": no help")
		case hasDefault && hasTag(f, "placeholder") && !strings.Contains(help, "(default ${default}"):
			problems = append(problems, name+": kong hides the default behind the placeholder: say (default ${default})")
		case hasDefault && !hasTag(f, "placeholder") && says:
			problems = append(problems, name+": says its default, which kong shows already")
		}
	})
	return problems
}
