package cli

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/job-signal/job-signal/internal/version"
	"github.com/job-signal/job-signal/signalfs"
)

// ParseQuick fills the flags of grammar and of its command (the field
// named command, tagged cmd) from args, the words after the command's
// name, and from the environment, exactly as kong would, without building
// kong's model of the whole command line: that model costs a wrapper more
// than the rest of its start-up. Other commands' fields, to which kong
// gives their defaults, are left alone. It reports false, having possibly
// changed grammar, for anything outside the common form of a command
// line, which kong then parses, with its errors and its help:
//
//   - flags are long (--name value, --name=value; a bool flag bare), each
//     given at most once, and known to the command;
//   - the first other word, or "--", starts the command's passthrough
//     argument (arg:"" passthrough:"partial");
//   - every value parses, is in its enum, and the Validate methods that
//     kong would call pass.
//
// A grammar with a tag kong gives a meaning this function does not
// implement (short, type, xor, required...) is never parsed quickly.
// quick_test.go holds the two parsers to agreeing.
func ParseQuick(program string, grammar any, command string, args []string) bool {
	root := reflect.ValueOf(grammar).Elem()
	cmdField, ok := root.Type().FieldByName(command)
	if !ok || !tagsOf(cmdField).cmd {
		return false
	}
	node := root.FieldByIndex(cmdField.Index)
	q := quick{vars: Vars(program)}
	if !q.collect(root, false) || !q.collect(node, true) || !q.arg.IsValid() || !q.reset() {
		return false
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || !strings.HasPrefix(a, "-") {
			q.arg.Set(reflect.ValueOf(slices.Clone(args[i:])))
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		f := q.flag(name)
		if !strings.HasPrefix(a, "--") || f == nil || !f.settable || f.given {
			return false
		}
		f.given = true
		switch {
		case f.value.Kind() == reflect.Bool && !hasValue:
			f.value.SetBool(true)
			continue
		case f.value.Kind() == reflect.Bool:
			return false
		case !hasValue:
			// A next word that starts with "-" is the value too (Main's
			// joinValues), unless it is "--".
			if i+1 == len(args) || args[i+1] == "--" {
				return false
			}
			i++
			value = args[i]
		}
		if !f.set(value) {
			return false
		}
	}
	for _, f := range q.flags {
		if len(f.enum) > 0 && !slices.Contains(f.enum, f.value.String()) {
			return false
		}
	}
	return validates(root) && validates(node)
}

// Vars are the variables the programs' struct tags may use (${dir}).
func Vars(program string) map[string]string {
	return map[string]string{"dir": signalfs.DefaultDir, "version": program + " " + version.String()}
}

type quick struct {
	vars  map[string]string
	flags []*quickFlag
	arg   reflect.Value // the command's passthrough argument
}

type quickFlag struct {
	name, env, def string
	hasDef         bool
	enum           []string
	value          reflect.Value
	settable       bool // a type this parser can set
	given          bool
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	stringsType  = reflect.TypeFor[[]string]()
)

// collect gathers the flags of the struct s, and of the structs it embeds;
// in the command's struct (isCommand) also its passthrough argument.
func (q *quick) collect(s reflect.Value, isCommand bool) bool {
	if hasKongHooks(s) {
		return false
	}
	st := s.Type()
	for i := range st.NumField() {
		f := st.Field(i)
		if !f.IsExported() {
			continue
		}
		t := tagsOf(f)
		if t.kongOnly {
			return false
		}
		switch {
		case t.cmd:
			if isCommand {
				return false // subcommands of the command
			}
		case f.Anonymous && f.Type.Kind() == reflect.Struct:
			if !q.collect(s.Field(i), isCommand) {
				return false
			}
		case t.arg:
			if !isCommand || q.arg.IsValid() || f.Type != stringsType || t.passthrough != "partial" {
				return false
			}
			q.arg = s.Field(i)
		case t.name == "":
			return false // kong would make a flag of it, named after the field
		default:
			if !q.add(f, t, s.Field(i)) {
				return false
			}
		}
	}
	return true
}

func (q *quick) add(f reflect.StructField, t tags, v reflect.Value) bool {
	qf := &quickFlag{name: t.name, env: t.env, def: t.def, hasDef: t.hasDef, value: v}
	if strings.Contains(qf.def, "$") {
		for k, val := range q.vars {
			qf.def = strings.ReplaceAll(qf.def, "${"+k+"}", val)
		}
	}
	if t.enum != "" {
		qf.enum = strings.Split(t.enum, ",")
	}
	switch f.Type {
	case stringsType:
		qf.settable = t.sep == "none"
	case durationType, reflect.TypeFor[string](), reflect.TypeFor[bool]():
		qf.settable = t.sep == ""
	}
	if strings.Contains(qf.def, "$") || strings.Contains(qf.env, "$") || strings.Contains(qf.env, ",") ||
		isValidatable(v) != nil || q.flag(qf.name) != nil {
		return false
	}
	q.flags = append(q.flags, qf)
	return true
}

func (q *quick) flag(name string) *quickFlag {
	for _, f := range q.flags {
		if f.name == name {
			return f
		}
	}
	return nil
}

// reset gives every flag the value kong starts from: its environment
// variable's, if set (even empty), else its default, else zero. A flag of
// a type this parser cannot set may only be left at zero.
func (q *quick) reset() bool {
	for _, f := range q.flags {
		f.value.SetZero()
		value, fromEnv := "", false
		if f.env != "" {
			value, fromEnv = os.LookupEnv(f.env)
		}
		if !fromEnv && f.hasDef {
			value = f.def
		}
		if !fromEnv && !f.hasDef {
			continue
		}
		if !f.settable || !f.set(value) {
			return false
		}
	}
	return true
}

// set decodes value as kong's mappers do.
func (f *quickFlag) set(value string) bool {
	switch f.value.Type() {
	case durationType:
		d, err := time.ParseDuration(value)
		if err != nil {
			return false
		}
		f.value.SetInt(int64(d))
	case stringsType:
		f.value.Set(reflect.ValueOf([]string{value}))
	default:
		if f.value.Kind() == reflect.String {
			f.value.SetString(value)
			return true
		}
		switch strings.ToLower(value) {
		case "true", "1", "yes":
			f.value.SetBool(true)
		case "false", "0", "no":
			f.value.SetBool(false)
		default:
			return false
		}
	}
	return true
}

// validates runs the Validate methods kong would call on the struct s and
// on the structs it embeds.
func validates(s reflect.Value) bool {
	if v := isValidatable(s); v != nil && v.Validate() != nil {
		return false
	}
	t := s.Type()
	for i := range t.NumField() {
		if f := t.Field(i); f.IsExported() && f.Anonymous && f.Type.Kind() == reflect.Struct && !validates(s.Field(i)) {
			return false
		}
	}
	return true
}

type validatable interface{ Validate() error }

// hasKongHooks reports whether the struct s has a method kong calls that
// ParseQuick does not: a hook (BeforeApply...), or a Validate that is not
// the plain Validate() error.
func hasKongHooks(s reflect.Value) bool {
	t := reflect.PointerTo(s.Type())
	for _, name := range []string{"BeforeReset", "BeforeResolve", "BeforeApply", "AfterApply", "AfterRun"} {
		if _, ok := t.MethodByName(name); ok {
			return true
		}
	}
	_, hasValidate := t.MethodByName("Validate")
	return hasValidate && !t.Implements(reflect.TypeFor[validatable]())
}

// isValidatable is v's Validate method, on v or on its address.
func isValidatable(v reflect.Value) validatable {
	if val, ok := v.Interface().(validatable); ok {
		return val
	}
	if v.CanAddr() {
		if val, ok := v.Addr().Interface().(validatable); ok {
			return val
		}
	}
	return nil
}
