package inject_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kong"
	corev1 "k8s.io/api/core/v1"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/jobsignal"
	"github.com/job-signal/job-signal/internal/sidecarwatch"
	"github.com/job-signal/job-signal/signalfs"
)

// parse parses args with a real program's grammar, as its main would
// (without running it).
func parse(t *testing.T, grammar any, args []string) {
	t.Helper()
	parser, err := kong.New(grammar, kong.Vars{"dir": signalfs.DefaultDir}, kong.Exit(func(int) { t.Fatalf("kong exited on %q", args) }))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parser.Parse(args); err != nil {
		t.Errorf("the real program rejects %q: %v", args, err)
	}
}

// checkFlags parses every wrapped command with the grammar of job-signal
// or sidecar-watch: the annotations map to flags that exist.
func checkFlags(t *testing.T, spec corev1.PodSpec) {
	t.Helper()
	for _, c := range spec.Containers {
		line := append(slices.Clone(c.Command), c.Args...)
		switch c.Command[0] {
		case inject.JobSignalPath:
			var cmd jobsignal.CLI
			parse(t, &cmd, append([]string{"run"}, line[1:]...))
			if c.Command[len(c.Command)-1] != "--" || !slices.Equal(cmd.Run.Command[1:], c.Args) && !slices.Equal(cmd.Run.Command, c.Args) {
				t.Errorf("%s: job-signal would run %q, want %q", c.Name, cmd.Run.Command, c.Args)
			}
		case inject.SidecarWatchPath:
			var cmd sidecarwatch.Cmd
			parse(t, &cmd, line[1:])
			if cmd.Name != c.Name {
				t.Errorf("%s: sidecar-watch --name %q", c.Name, cmd.Name)
			}
		}
	}
}

// TestDefaultsMatchSidecarWatch: the stop budget uses sidecar-watch's own
// defaults.
func TestDefaultsMatchSidecarWatch(t *testing.T) {
	var cmd sidecarwatch.Cmd
	parse(t, &cmd, []string{"--name", "x", "--", "true"})
	if cmd.Grace != inject.DefaultGrace || cmd.StopAfterTimeout != inject.DefaultStopAfterTimeout {
		t.Errorf("sidecar-watch defaults --grace %s --stop-after-timeout %s; inject assumes %s and %s",
			cmd.Grace, cmd.StopAfterTimeout, inject.DefaultGrace, inject.DefaultStopAfterTimeout)
	}
}

func TestStopBudget(t *testing.T) {
	grace := map[string]time.Duration{"proxy": 10 * time.Second, "logs": 5 * time.Second, "slow": 40 * time.Second}
	for _, tc := range []struct {
		name      string
		quit      map[string]bool
		stopAfter map[string][]string
		want      time.Duration
	}{
		{"README's default: wait, then the signal", nil, nil, 20 * time.Second},
		{"a quit URL adds a grace", map[string]bool{"proxy": true}, nil, 30 * time.Second},
		{"stop-after adds the other's stop", nil, map[string][]string{"proxy": {"logs"}}, 25 * time.Second},
		{"stop-after waits at most 30s", nil, map[string][]string{"proxy": {"slow"}}, 50 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := inject.StopBudget("proxy", grace, tc.quit, tc.stopAfter); got != tc.want {
				t.Errorf("StopBudget = %s, want %s", got, tc.want)
			}
		})
	}
}

// TestLayoutPaths: the binaries' own default --dir is the layout's state
// directory, so the wrapped commands need no --dir.
func TestLayoutPaths(t *testing.T) {
	if inject.StateDir != signalfs.DefaultDir {
		t.Errorf("layout state dir %s, programs default to %s", inject.StateDir, signalfs.DefaultDir)
	}
	if !strings.HasPrefix(inject.JobSignalPath, inject.BinDir+"/") {
		t.Error(inject.JobSignalPath)
	}
}

// TestInjectWritesOnlyWhatSidecarWatchAccepts: a sidecar setting inject
// accepts in an annotation must be one sidecar-watch accepts as a flag,
// or the Pod starts and its sidecar fails at run time. Each value is
// either refused by inject, naming the annotation, or parsed by the real
// sidecar-watch grammar and its checks.
func TestInjectWritesOnlyWhatSidecarWatchAccepts(t *testing.T) {
	for _, tc := range []struct{ key, value string }{
		{"ready-http.proxy", "https://127.0.0.1:15000/ready"},
		{"ready-http.proxy", "http://user:secret@127.0.0.1:15000/ready"},
		{"ready-http.proxy", "http://127.0.0.1:http/ready"},
		{"ready-http.proxy", "http://127.0.0.1:70000/ready"},
		{"ready-http.proxy", "http:///ready"},
		{"quit-url.proxy", "https://127.0.0.1:15000/quitquitquit"},
		{"quit-url.proxy", "http://u@127.0.0.1:15000/quitquitquit"},
		{"ready-tcp.proxy", ":5432"},
		{"ready-tcp.proxy", "127.0.0.1"},
		{"ready-tcp.proxy", "127.0.0.1:postgres"},
		{"ready-tcp.proxy", "127.0.0.1:0"},
		{"ready-tcp.proxy", "[::1]:5432"},
		{"ready-file.proxy", "ready"},
		{"ready-file.proxy", "/tmp/ready"},
		{"stop-signal.proxy", "sigusr1"},
		{"stop-signal.proxy", "URG"},
		{"grace.proxy", "-1s"},
		{"grace.proxy", "0s"},
		{"grace", "1h"},
		{"restart.proxy", "always"},
		{"ready-timeout", "0"},
	} {
		t.Run(tc.key+"="+tc.value, func(t *testing.T) {
			spec := corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{
				{Name: "main", Image: "app", Command: []string{"/app"}},
				{Name: "proxy", Image: "proxy", Command: []string{"/proxy"}},
			}}
			annotation := inject.Prefix + tc.key
			res, err := injectSpec(spec, map[string]string{annotation: tc.value, inject.Prefix + "main": "main"}, nil)
			if err != nil {
				if !strings.Contains(err.Error(), annotation) {
					t.Errorf("refused without naming %s: %v", annotation, err)
				}
				return
			}
			checkFlags(t, res.Spec)
		})
	}
}
