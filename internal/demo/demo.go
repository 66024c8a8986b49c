// Package demo shows job-signal and sidecar-watch at work without
// Kubernetes: the processes a Job Pod would run, sharing a temporary
// directory as the Pod's containers share an emptyDir.
//
// The Pod has a network proxy, a config agent that may only start once the
// proxy is up (--after proxy), and a log shipper. The job waits for the
// proxy and the config agent (--wait-for), talks through the proxy, and
// ends. Then the config agent and the log shipper stop, and the proxy
// stops last (--stop-after config,logs). Three scenes play it: the job
// succeeds; the job fails, and its exit code reaches the Pod's verdict;
// the main container is SIGKILLed (as by an OOM kill), and the sidecars
// stop all the same.
//
//	demo.go      the command line, the scenes and the exit code
//	pod.go       one scene's Pod: its containers and their verdict
//	stream.go    the one ordered stream of every container's lines
//	workload.go  the containers' own programs
package demo

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// scene is one run of the Pod, and the verdict it must end with.
type scene struct {
	name, title string
	job         string // how the job ends: its exit code, or "kill" for a SIGKILLed main container
	want        string // the Pod's phase: Succeeded or Failed
}

var scenes = []scene{
	{"success", "the job succeeds", "0", "Succeeded"},
	{"fail", "the job fails with exit code 3, which reaches the Pod's verdict", "3", "Failed"},
	{"kill", "the main container is SIGKILLed (as by an OOM kill): no done marker, the sidecars stop all the same", "kill", "Failed"},
}

const usage = `Usage: job-signal-demo [-bin DIR] [-scene all|success|fail|kill]

Runs a Job Pod's containers on this machine (job-signal, and sidecar-watch
for a proxy, a config agent and a log shipper) and prints what happens and
when, then the Pod's verdict.

Exit status: with -scene all (the default), 0 when every scene ends with
the verdict it should (success: Succeeded; fail and kill: Failed), else 1;
with one scene, that scene's Pod's verdict: 0 Succeeded, 1 Failed.
`

// Main runs the demo, or one of its workloads when args start with
// "workload", and returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "workload" {
		return workload(args[1:], stdout)
	}
	fs := flag.NewFlagSet("job-signal-demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage); fs.PrintDefaults() }
	bin := fs.String("bin", "bin", "directory holding job-signal and sidecar-watch")
	which := fs.String("scene", "all", "the scene to show: all, "+sceneNames())
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "job-signal-demo: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	chosen, err := choose(*which)
	if err != nil {
		fmt.Fprintln(stderr, "job-signal-demo: -scene:", err)
		return 2
	}
	d, err := newDemo(*bin, stdout)
	if err != nil {
		fmt.Fprintln(stderr, "job-signal-demo:", err)
		return 1
	}
	defer os.RemoveAll(d.work)
	return d.play(chosen, *which == "all", stderr)
}

func sceneNames() string {
	var names []string
	for _, s := range scenes {
		names = append(names, s.name)
	}
	return strings.Join(names, ", ")
}

// choose is the scenes -scene names.
func choose(which string) ([]scene, error) {
	if which == "all" {
		return scenes, nil
	}
	for _, s := range scenes {
		if s.name == which {
			return []scene{s}, nil
		}
	}
	return nil, fmt.Errorf("no scene %q: give all, %s", which, sceneNames())
}

// play shows the scenes and returns the exit code: with all of them,
// whether each ended as it should; with one, its Pod's verdict.
func (d *demo) play(chosen []scene, all bool, stderr io.Writer) int {
	fmt.Fprintf(d.out, "A Job Pod with a proxy, a config agent (starts after the proxy) and a log shipper; the\n")
	fmt.Fprintf(d.out, "proxy stops last. Each line: seconds since the Pod started, container, what it wrote.\n")
	var wrong []string
	verdict := ""
	for i, s := range chosen {
		fmt.Fprintf(d.out, "\n=== Scene %d of %d: %s\n\n", i+1, len(chosen), s.title)
		got, err := d.runScene(s)
		if err != nil {
			fmt.Fprintln(stderr, "job-signal-demo:", err)
			return 1
		}
		verdict = got
		if got != s.want {
			wrong = append(wrong, fmt.Sprintf("%s: the Pod would be %s, not %s", s.name, got, s.want))
		}
	}
	if !all {
		if verdict != "Succeeded" {
			return 1
		}
		return 0
	}
	if len(wrong) > 0 {
		fmt.Fprintf(d.out, "\nNot as expected: %s\n", strings.Join(wrong, "; "))
		return 1
	}
	fmt.Fprintf(d.out, "\nEvery scene ended as it should: Succeeded, Failed, Failed; every sidecar stopped and exited 0.\n")
	return 0
}

// demo is what the scenes share: the programs and a working directory.
type demo struct {
	bin, work, self string
	out             io.Writer
}

func newDemo(bin string, out io.Writer) (*demo, error) {
	abs, err := filepath.Abs(bin)
	if err != nil {
		return nil, err
	}
	for _, prog := range []string{"job-signal", "sidecar-watch"} {
		if _, err := os.Stat(filepath.Join(abs, prog)); err != nil {
			return nil, fmt.Errorf("%v (run 'make demo', which builds them, or pass -bin)", err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "job-signal-demo-")
	if err != nil {
		return nil, err
	}
	return &demo{bin: abs, work: work, self: self, out: out}, nil
}
