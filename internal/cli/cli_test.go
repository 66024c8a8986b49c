package cli

import (
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestNearest(t *testing.T) {
	commands := []string{"run", "install", "status", "version"}
	for _, tc := range []struct {
		word, want string
		ok         bool
	}{
		{"stauts", "status", true},
		{"statu", "status", true},
		{"instal", "install", true},
		{"verison", "version", true},
		{"status", "", false}, // itself
		{"python3", "", false},
		{"migrate", "", false},
	} {
		got, ok := Nearest(tc.word, commands)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Nearest(%q) = %q, %v; want %q, %v", tc.word, got, ok, tc.want, tc.ok)
		}
	}
}

type testGrammar struct {
	LogOptions
	Wrapper
	Grace   time.Duration `name:"grace" default:"10s"`
	Quick   time.Duration `name:"quick" nonzero:""`
	Verbose bool          `name:"verbose"`
	Command []string      `arg:"" passthrough:"partial"`
}

func TestCheckDurations(t *testing.T) {
	for _, tc := range []struct {
		g    testGrammar
		want string
	}{
		{testGrammar{Grace: 0, Quick: time.Second, Wrapper: Wrapper{PollInterval: time.Second}}, ""},
		{testGrammar{Grace: -time.Second, Quick: time.Second, Wrapper: Wrapper{PollInterval: time.Second}}, "--grace: must not be negative, got -1s"},
		{testGrammar{Quick: 0, Wrapper: Wrapper{PollInterval: time.Second}}, "--quick: must be positive, got 0s"},
		{testGrammar{Quick: time.Second}, "--poll-interval: must be positive, got 0s"}, // from the embedded Wrapper
	} {
		err := CheckDurations(&tc.g)
		if (err == nil) != (tc.want == "") || err != nil && err.Error() != tc.want {
			t.Errorf("CheckDurations(%+v) = %v, want %q", tc.g, err, tc.want)
		}
	}
}

func TestScan(t *testing.T) {
	fl := FlagsOf(&testGrammar{})
	if !fl.takesValue["dir"] || fl.takesValue["verbose"] || !fl.takesValue["grace"] {
		t.Fatalf("flags: %v", fl)
	}
	for _, tc := range []struct {
		args  string
		dir   string
		first string
	}{
		{"--dir a --dir b stauts", "b", "stauts"},
		{"--dir=a --verbose run", "a", "run"},
		{"--grace -1s -- status", "", ""},
		{"--verbose /bin/true", "", "/bin/true"},
		{"--dir", "", ""}, // a flag without its value
	} {
		sc := fl.Scan(strings.Fields(tc.args))
		if sc.Values["dir"] != tc.dir || sc.First != tc.first {
			t.Errorf("Scan(%q) = dir %q, first %q; want %q, %q", tc.args, sc.Values["dir"], sc.First, tc.dir, tc.first)
		}
	}
}

func TestJoinValues(t *testing.T) {
	fl := FlagsOf(&testGrammar{})
	got := fl.joinValues(strings.Fields("--grace -1s --verbose -- --grace -2s"))
	want := strings.Fields("--grace=-1s --verbose -- --grace -2s")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("joinValues = %q, want %q", got, want)
	}
}

// commandGrammar has commands, the first of which passes COMMAND through.
type commandGrammar struct {
	Grace time.Duration `name:"grace"`
	Run   struct {
		Wait    time.Duration `name:"wait"`
		Command []string      `arg:"" passthrough:"partial"`
	} `cmd:""`
	ShowAll struct{} `cmd:""`
}

// After COMMAND, every word is COMMAND's, even one named like our flags:
// neither joined with the next word nor refused for a missing value.
func TestCommandArgumentsUntouched(t *testing.T) {
	fl := FlagsOf(&commandGrammar{})
	for _, tc := range []struct{ args, want string }{
		{"--grace -1s run --wait -2s /bin/x --grace -3s", "--grace=-1s run --wait=-2s /bin/x --grace -3s"},
		{"run /bin/x --wait -1s", "run /bin/x --wait -1s"},
		{"show-all --grace -1s", "show-all --grace=-1s"},
	} {
		if got := fl.joinValues(strings.Fields(tc.args)); !reflect.DeepEqual(got, strings.Fields(tc.want)) {
			t.Errorf("joinValues(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
	if err := fl.MissingValue(strings.Fields("run /bin/x --wait --grace")); err != nil {
		t.Errorf("MissingValue in COMMAND's arguments: %v", err)
	}
	if err := fl.MissingValue(strings.Fields("run --wait --grace /bin/x")); err == nil {
		t.Error("MissingValue: no error for --wait --grace")
	}
}

// The command names FlagsOf knows are kong's.
func TestFlagsCommandsAreKongs(t *testing.T) {
	var g commandGrammar
	var names []string
	for _, c := range newParser("t", "", &g, io.Discard, io.Discard).Model.Children {
		names = append(names, c.Name)
	}
	if got := FlagsOf(&g).commands; !reflect.DeepEqual(got, names) {
		t.Errorf("commands %q, kong has %q", got, names)
	}
}
