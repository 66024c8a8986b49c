package demo

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/job-signal/job-signal/internal/jobsignal"
	"github.com/job-signal/job-signal/internal/sidecarwatch"
)

// TestMain makes the test binary the demo's programs too: job-signal and
// sidecar-watch through links named so (bin), the workloads through its
// own "workload" argument. The scenes run real processes.
func TestMain(m *testing.M) {
	switch {
	case filepath.Base(os.Args[0]) == "job-signal":
		os.Exit(jobsignal.MainOS())
	case filepath.Base(os.Args[0]) == "sidecar-watch":
		os.Exit(sidecarwatch.MainOS())
	case len(os.Args) > 1 && os.Args[1] == "workload":
		os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// bin links job-signal and sidecar-watch to the test binary.
func bin(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{"job-signal", "sidecar-watch"} {
		if err := os.Symlink(self, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// shown is one line of a scene as the demo printed it.
type shown struct {
	at        float64
	who, text string
}

var shownLine = regexp.MustCompile(`^\s*\+(\d+\.\d+)s  (\S+)\s* \| (.*)$`)

// scenesOf splits the demo's output into its scenes' lines.
func scenesOf(t *testing.T, out string) [][]shown {
	t.Helper()
	var scenes [][]shown
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "=== Scene ") {
			scenes = append(scenes, nil)
			continue
		}
		m := shownLine.FindStringSubmatch(line)
		if m == nil || len(scenes) == 0 {
			continue
		}
		at, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		scenes[len(scenes)-1] = append(scenes[len(scenes)-1], shown{at, m[2], m[3]})
	}
	return scenes
}

// index is the position of the first line of who that contains text.
func index(t *testing.T, lines []shown, who, text string) int {
	t.Helper()
	for i, l := range lines {
		if l.who == who && strings.Contains(l.text, text) {
			return i
		}
	}
	t.Fatalf("no line of %s with %q", who, text)
	return -1
}

// TestScenes plays the three scenes and checks that each ends with its
// verdict and that the lines are in the order things happened: the stamps
// never go back, each cause comes before its effect across processes, and
// no container's line comes after the note that it exited.
func TestScenes(t *testing.T) {
	var out, errs bytes.Buffer
	code := Main([]string{"-bin", bin(t)}, &out, &errs)
	t.Log(out.String())
	if code != 0 {
		t.Fatalf("exit code %d, want 0; stderr: %s", code, errs.String())
	}
	for _, verdict := range []string{"The Pod would be Succeeded (expected Succeeded): proxy 0 config 0 logs 0 job 0.",
		"The Pod would be Failed (expected Failed): proxy 0 config 0 logs 0 job 3.",
		"The Pod would be Failed (expected Failed): proxy 0 config 0 logs 0 job 137."} {
		if !strings.Contains(out.String(), verdict) {
			t.Errorf("no %q", verdict)
		}
	}
	scenes := scenesOf(t, out.String())
	if len(scenes) != 3 {
		t.Fatalf("%d scenes, want 3", len(scenes))
	}
	ends := []string{"job: finished, exiting with code 0", "job: finished, exiting with code 3", "job: over its memory limit"}
	for n, lines := range scenes {
		for i := 1; i < len(lines); i++ {
			if lines[i].at < lines[i-1].at {
				t.Errorf("scene %d: line %d stamped %.3f after one stamped %.3f", n+1, i, lines[i].at, lines[i-1].at)
			}
		}
		// Causes before effects, each pair written by different processes.
		chain := []struct{ who, text string }{
			{"proxy", "proxy: listening on"},
			{"proxy", `msg="sidecar ready"`},
			{"config", `msg="sidecars ready; starting"`},
			{"config", "config: fetched configuration through the proxy"},
			{"job", `msg="all sidecars ready"`},
			{"job", "job: request 1 through the proxy"},
			{"job", ends[n]},
			{"proxy", `msg="stopping the sidecar"`},
			{"proxy", `msg="sidecars stopped first; stopping now"`},
			{"proxy", "proxy: SIGTERM"},
			{"demo", "proxy container exited with code 0"},
		}
		for i := 1; i < len(chain); i++ {
			a, b := chain[i-1], chain[i]
			if index(t, lines, a.who, a.text) > index(t, lines, b.who, b.text) {
				t.Errorf("scene %d: %s %q shown after %s %q", n+1, a.who, a.text, b.who, b.text)
			}
		}
		for _, stopsFirst := range []string{"config: SIGTERM", "logs: SIGTERM"} {
			who, _, _ := strings.Cut(stopsFirst, ":")
			if index(t, lines, who, stopsFirst) > index(t, lines, "proxy", "proxy: SIGTERM") {
				t.Errorf("scene %d: %q shown after the proxy's", n+1, stopsFirst)
			}
		}
		for _, c := range []string{"proxy", "config", "logs", "job"} {
			exited := index(t, lines, "demo", c+" container exited")
			for i := exited + 1; i < len(lines); i++ {
				if lines[i].who == c {
					t.Errorf("scene %d: %s wrote %q, shown after the note that it exited", n+1, c, lines[i].text)
				}
			}
		}
	}
}

// TestOneScene: with one scene, the exit code is its Pod's verdict.
func TestOneScene(t *testing.T) {
	var out, errs bytes.Buffer
	if code := Main([]string{"-bin", bin(t), "-scene", "fail"}, &out, &errs); code != 1 {
		t.Errorf("-scene fail: exit code %d, want 1 (the Pod failed); stderr: %s", code, errs.String())
	}
	if n := strings.Count(out.String(), "=== Scene "); n != 1 {
		t.Errorf("-scene fail showed %d scenes", n)
	}
	if !strings.Contains(out.String(), "The Pod would be Failed (expected Failed): proxy 0 config 0 logs 0 job 3.") {
		t.Errorf("no verdict in:\n%s", out.String())
	}
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{{"-scene", "nope"}, {"extra"}, {"-nope"}} {
		var out, errs bytes.Buffer
		if code := Main(args, &out, &errs); code != 2 {
			t.Errorf("%q: exit code %d, want 2", args, code)
		}
		if errs.Len() == 0 {
			t.Errorf("%q: nothing on stderr", args)
		}
	}
}

func TestSource(t *testing.T) {
	for _, tc := range []struct{ line, who, text string }{
		{`time=2026-01-01T00:00:00Z level=INFO msg="sidecar ready" prog=sidecar-watch sidecar=proxy how=x`, "proxy", `level=INFO msg="sidecar ready" how=x`},
		{`time=2026-01-01T00:00:00Z level=INFO msg="job starting" prog=job-signal attempt=1`, "job", `level=INFO msg="job starting" attempt=1`},
		{`sidecar-watch: error: --name: bad`, "?", `sidecar-watch: error: --name: bad`},
		{`proxy: listening on 127.0.0.1:1`, "proxy", `proxy: listening on 127.0.0.1:1`},
		{`demo: job container exited with code 3`, "demo", `job container exited with code 3`},
	} {
		who, text := source(tc.line)
		if who != tc.who || text != tc.text {
			t.Errorf("source(%q) = %q, %q; want %q, %q", tc.line, who, text, tc.who, tc.text)
		}
	}
}
