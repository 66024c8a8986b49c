package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kong"
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
		args    string
		dir     string
		command string
		help    int
	}{
		{"--dir a --dir b stauts", "b", "stauts", -1},
		{"--dir=a --verbose run", "a", "run", -1}, // no commands: COMMAND
		{"--grace -1s -- status", "", "", -1},
		{"--verbose /bin/true -h", "", "/bin/true", -1}, // -h is COMMAND's
		{"--dir", "", "", -1},                           // a flag without its value
		{"--dir -- x", "", "", -1},                      // nor is "--" its value
		{"--verbose -h --dir d", "d", "", 1},
	} {
		sc := fl.Scan(strings.Fields(tc.args))
		if sc.Values["dir"] != tc.dir || sc.Cmd != "" || sc.Command != tc.command || sc.Help != tc.help || sc.Missing != nil {
			t.Errorf("Scan(%q) = dir %q, cmd %q, command %q, help %d, missing %v; want %q, \"\", %q, %d, nil",
				tc.args, sc.Values["dir"], sc.Cmd, sc.Command, sc.Help, sc.Missing, tc.dir, tc.command, tc.help)
		}
	}
	got := fl.Scan(strings.Fields("--grace -1s --verbose -- --grace -2s")).Kong
	if want := strings.Fields("--grace=-1s --verbose -- --grace -2s"); !reflect.DeepEqual(got, want) {
		t.Errorf("Kong = %q, want %q", got, want)
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
	for _, tc := range []struct{ args, want, cmd, command string }{
		{"--grace -1s run --wait -2s /bin/x --grace -3s", "--grace=-1s run --wait=-2s /bin/x --grace -3s", "run", "/bin/x"},
		{"run /bin/x --wait -1s", "run /bin/x --wait -1s", "run", "/bin/x"},
		{"show-all --grace -1s", "show-all --grace=-1s", "show-all", ""},
		{"run run --wait -1s", "run run --wait -1s", "run", "run"},
		{"stauts run --wait -1s", "stauts run --wait -1s", "", "stauts"},
	} {
		sc := fl.Scan(strings.Fields(tc.args))
		if !reflect.DeepEqual(sc.Kong, strings.Fields(tc.want)) || sc.Cmd != tc.cmd || sc.Command != tc.command {
			t.Errorf("Scan(%q) = %q, cmd %q, command %q; want %q, %q, %q", tc.args, sc.Kong, sc.Cmd, sc.Command, tc.want, tc.cmd, tc.command)
		}
	}
	if sc := fl.Scan(strings.Fields("run /bin/x --wait --grace")); sc.Missing != nil {
		t.Errorf("a missing value in COMMAND's arguments: %v", sc.Missing)
	}
	sc := fl.Scan(strings.Fields("run --wait --grace 1s /bin/x"))
	if sc.Missing == nil || sc.Missing.Error() != "--wait has no value: the next word, --grace, is a flag (an empty variable? write --wait=VALUE)" {
		t.Errorf("Missing = %v for --wait --grace", sc.Missing)
	}
	if sc.Values["grace"] != "1s" || sc.Command != "/bin/x" {
		t.Errorf("after a missing value: grace %q, command %q", sc.Values["grace"], sc.Command)
	}
}

// The command names FlagsOf knows are kong's.
func TestFlagsCommandsAreKongs(t *testing.T) {
	var g commandGrammar
	var names []string
	for _, c := range newParser("t", "", &g, io.Discard, io.Discard).Model.Children {
		names = append(names, c.Name)
	}
	if got := FlagsOf(&g).Commands; !reflect.DeepEqual(got, names) {
		t.Errorf("commands %q, kong has %q", got, names)
	}
}

// Default gives kong the default command first when the line names none,
// and leaves a line that names one as it is.
func TestDefault(t *testing.T) {
	fl := FlagsOf(&commandGrammar{})
	for _, tc := range []struct{ args, want, cmd string }{
		{"--grace 1s -- show-all", "run --grace 1s -- show-all", "run"},
		{"/bin/x -h", "run /bin/x -h", "run"},
		{"show-all --grace -1s", "show-all --grace=-1s", "show-all"},
		{"--grace 1s run /bin/x", "--grace 1s run /bin/x", "run"},
	} {
		sc := fl.Scan(strings.Fields(tc.args)).Default("run")
		if !reflect.DeepEqual(sc.Kong, strings.Fields(tc.want)) || sc.Cmd != tc.cmd {
			t.Errorf("Scan(%q).Default = %q, cmd %q; want %q, %q", tc.args, sc.Kong, sc.Cmd, tc.want, tc.cmd)
		}
	}
}

// A usage error points to the help of the command the line names.
func TestUsageHelpOfCommand(t *testing.T) {
	var g commandGrammar
	var stderr strings.Builder
	code := MainScanned("t", "", &g, FlagsOf(&g).Scan(strings.Fields("run --wait")), io.Discard, &stderr, nil, func(*kong.Context) error { return nil })
	if code != ExitUsage || !strings.Contains(stderr.String(), "Run 't run --help' for usage.") {
		t.Errorf("exit code %d, stderr %q", code, stderr.String())
	}
}

// TestLogAt: a record logged late carries the time it names, and the
// logger's own attributes; below the logger's level, nothing.
func TestLogAt(t *testing.T) {
	var buf bytes.Buffer
	log := LogOptions{LogFormat: "json", LogLevel: "info"}.Logger(&buf, "sidecar-watch")
	at := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)
	LogAt(log, at, slog.LevelInfo, "sent stop signal", "signal", "TERM")
	LogAt(log, at, slog.LevelDebug, "not shown")
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("%v: %s", err, buf.String())
	}
	if rec["time"] != "2026-01-02T03:04:05.123456789Z" || rec["msg"] != "sent stop signal" || rec["prog"] != "sidecar-watch" || rec["signal"] != "TERM" {
		t.Errorf("record %v", rec)
	}
}

// TestLoggerWritesAsSlog pins the logger's lines to those of slog's own
// handlers, without a ReplaceAttr, byte for byte: the level as its name
// and every other value as slog writes it; only durations differ, as Go
// writes them.
func TestLoggerWritesAsSlog(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)
	levels := []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError, slog.LevelInfo + 2, slog.LevelError + 4}
	for _, format := range []string{"json", "text"} {
		for _, level := range levels {
			var got, want bytes.Buffer
			hopts := &slog.HandlerOptions{Level: slog.LevelDebug}
			var plain slog.Handler = slog.NewTextHandler(&want, hopts)
			if format == "json" {
				plain = slog.NewJSONHandler(&want, hopts)
			}
			log := LogOptions{LogFormat: format, LogLevel: "debug"}.Logger(&got, "job-signal")
			args := []any{"uid", "3f0c\"6a52", "n", 3, "ok", true, "level", "not the level", "took", 1500 * time.Millisecond}
			LogAt(log, at, level, "a line", args...)
			LogAt(slog.New(plain).With("prog", "job-signal"), at, level, "a line", append(args[:len(args)-2:len(args)-2], "took", "1.5s")...)
			if got.String() != want.String() {
				t.Errorf("%s, level %v:\n got  %s\n want %s", format, level, got.String(), want.String())
			}
		}
	}
}
