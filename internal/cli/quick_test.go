package cli

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kong"
)

// quickGrammar has every kind of flag ParseQuick reads, and what it leaves
// to kong.
type quickGrammar struct {
	LogOptions
	Version kong.VersionFlag `name:"version" help:"Print the version."`

	Run   quickRun   `cmd:"" default:"withargs" help:"Run."`
	Other quickOther `cmd:"" help:"Other."`
}

type quickRun struct {
	Wrapper
	WaitFor []string      `name:"wait-for" sep:"none" env:"QT_WAIT_FOR" placeholder:"NAME,..." help:"Names."`
	Timeout time.Duration `name:"timeout" default:"5m" env:"QT_TIMEOUT" placeholder:"DURATION" help:"Timeout (default ${default})."`
	Policy  string        `name:"policy" enum:"Never,OnFailure" default:"Never" env:"QT_POLICY" help:"Policy."`
	Group   bool          `name:"group" env:"QT_GROUP" help:"Group."`
	Tick    time.Duration `name:"tick" default:"10s" nonzero:"" placeholder:"DURATION" help:"Tick (default ${default})."`
	Command []string      `arg:"" optional:"" passthrough:"partial" name:"COMMAND" help:"Command."`

	validated int // how often Validate ran, which kong and ParseQuick must agree on
}

func (r *quickRun) Validate() error {
	r.validated++
	if len(Command(r.Command)) == 0 {
		return Invalid(errMissing)
	}
	return Invalid(CheckDurations(r))
}

var errMissing = &ExitError{Code: ExitUsage}

type quickOther struct {
	Name string `name:"name" help:"Name."`
}

// A grammar with a hook kong calls is left to kong.
func TestParseQuickLeavesHooksToKong(t *testing.T) {
	var g hookGrammar
	if ParseQuick("qt", &g, "Run", []string{"--", "x"}) {
		t.Error("ParseQuick parsed a grammar with an AfterApply hook")
	}
	if _, err := ParseKong("qt", &g, []string{"run", "--", "x"}); err != nil || !g.Run.applied {
		t.Errorf("kong: %v, hook ran: %v", err, g.Run.applied)
	}
}

type hookGrammar struct {
	Run hookRun `cmd:""`
}

type hookRun struct {
	Command []string `arg:"" passthrough:"partial"`
	applied bool
}

func (r *hookRun) AfterApply() error {
	r.applied = true
	return nil
}

// agree parses args both ways and fails t when ParseQuick accepted them
// but kong would not, or would make something else of them. It returns
// whether ParseQuick accepted them.
func agree(t *testing.T, args []string) bool {
	t.Helper()
	var quick, reference quickGrammar
	ok := ParseQuick("qt", &quick, "Run", args)
	command, err := ParseKong("qt", &reference, append([]string{"run"}, args...))
	if !ok {
		return false
	}
	if err != nil {
		t.Fatalf("%q: ParseQuick accepted what kong rejects: %v", args, err)
	}
	if !strings.HasPrefix(command, "run") {
		t.Fatalf("%q: kong ran %q", args, command)
	}
	if !reflect.DeepEqual(quick, reference) {
		t.Fatalf("%q: ParseQuick made\n%+v\nkong made\n%+v", args, quick, reference)
	}
	return true
}

func TestParseQuickAgreesWithKong(t *testing.T) {
	for _, tc := range []struct {
		args  string
		env   map[string]string
		quick bool // the common form: ParseQuick must accept it
	}{
		{args: "-- true", quick: true},
		{args: "true", quick: true},
		{args: "true --dir x -h", quick: true}, // after COMMAND, everything is COMMAND's
		{args: "x --timeout -1s --dir --group", quick: true},
		{args: "--dir /d --wait-for a,b -- /bin/x -y", quick: true},
		{args: "--dir=/d --wait-for=a,b --timeout 0s --policy OnFailure --group --poll -- x", quick: true},
		{args: "--log-format json --log-level debug x", quick: true},
		{args: "--timeout -1s -- x"}, // a negative duration: Validate refuses it
		{args: "--dir -d -- x", quick: true},
		{args: "--dir= -- x", quick: true},
		{args: "--termination-log -- -- x"},
		{args: "-- --dir x", quick: true},
		{args: "--", quick: false},
		{args: "", quick: false},
		{args: "--dir a --dir b -- x"},
		{args: "--wait-for a --wait-for b -- x"},
		{args: "--policy Always -- x"},
		{args: "--timeout soon -- x"},
		{args: "--group=true -- x"},
		{args: "--no-such -- x"},
		{args: "--name n -- x"}, // the other command's flag
		{args: "-h"},
		{args: "--help -- x"},
		{args: "--version"},
		{args: "--tick 0s -- x"},
		{args: "- x"},
		{args: "--dir"},
		{args: "-- x", env: map[string]string{"QT_WAIT_FOR": "a,b", "QT_TIMEOUT": "1m", "QT_POLICY": "OnFailure", "QT_GROUP": "yes", "JOB_SIGNAL_DIR": "/e", "JOB_SIGNAL_POLL": "1"}, quick: true},
		{args: "-- x", env: map[string]string{"QT_GROUP": "TRUE", "JOB_SIGNAL_POLL": "No"}, quick: true},
		{args: "-- x", env: map[string]string{"QT_WAIT_FOR": ""}, quick: true},
		{args: "-- x", env: map[string]string{"JOB_SIGNAL_DIR": ""}, quick: true},
		{args: "--dir /f -- x", env: map[string]string{"JOB_SIGNAL_DIR": "/e"}, quick: true},
		{args: "-- x", env: map[string]string{"QT_TIMEOUT": ""}},
		{args: "-- x", env: map[string]string{"QT_TIMEOUT": "later"}},
		{args: "--timeout 1s -- x", env: map[string]string{"QT_TIMEOUT": "later"}},
		{args: "-- x", env: map[string]string{"QT_POLICY": "Always"}},
		{args: "-- x", env: map[string]string{"QT_GROUP": "maybe"}},
		{args: "-- x", env: map[string]string{"QT_GROUP": ""}},
		{args: "-- x", env: map[string]string{"JOB_SIGNAL_LOG_FORMAT": "yaml"}},
	} {
		t.Run(tc.args, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			if got := agree(t, strings.Fields(tc.args)); tc.quick && !got {
				t.Errorf("%q: ParseQuick declined the common form", tc.args)
			}
		})
	}
}

// FuzzParseQuick holds ParseQuick to kong on command lines made of the
// words that matter to either.
func FuzzParseQuick(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3}, uint8(0))
	f.Add([]byte{4, 5, 6, 7, 8, 9}, uint8(3))
	f.Add([]byte{10, 11, 12, 13, 14, 15, 16}, uint8(255))
	words := []string{"--", "x", "-", "-h", "--help", "--dir", "--dir=", "--dir=a", "a", "-1s", "1s", "0s", "--timeout",
		"--timeout=-1s", "--wait-for", "a,b", "--policy", "Never", "OnFailure", "Always", "--group", "--group=false",
		"--poll", "--poll-interval", "--tick", "--log-format", "json", "--log-level", "--version", "--name", "run",
		"other", "--termination-log", "", "--subreaper", "-x", "--no-such", "=", "--=x", "---dir"}
	envs := []struct{ name, value string }{
		{"QT_TIMEOUT", "later"}, {"QT_TIMEOUT", "2s"}, {"QT_GROUP", "yes"}, {"QT_GROUP", "nope"},
		{"QT_WAIT_FOR", ""}, {"QT_POLICY", "OnFailure"}, {"JOB_SIGNAL_DIR", ""}, {"JOB_SIGNAL_POLL_INTERVAL", "0s"},
	}
	f.Fuzz(func(t *testing.T, picks []byte, envBits uint8) {
		if len(picks) > 12 {
			return
		}
		args := make([]string, len(picks))
		for i, p := range picks {
			args[i] = words[int(p)%len(words)]
		}
		for i, e := range envs {
			if envBits&(1<<i) != 0 {
				t.Setenv(e.name, e.value)
			}
		}
		agree(t, args)
	})
}
