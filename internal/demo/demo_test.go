package demo

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

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
		// Each container's program writes after it was started, and stops
		// after it was signalled: sidecar-watch and job-signal log these
		// once their effects may be under way, stamped when they were done.
		for _, pair := range []struct{ who, cause, effect string }{
			{"proxy", `msg="sidecar started"`, "proxy: starting up"},
			{"config", `msg="sidecar started"`, "config: fetched configuration"},
			{"logs", `msg="sidecar started"`, "logs: shipping logs"},
			{"job", `msg="command started"`, "job: request 1"},
			{"proxy", `msg="sent stop signal"`, "proxy: SIGTERM"},
			{"config", `msg="stopping the sidecar"`, "config: SIGTERM"},
			{"config", `msg="sent stop signal"`, "config: SIGTERM"},
			{"logs", `msg="stopping the sidecar"`, "logs: SIGTERM"},
			{"logs", `msg="sent stop signal"`, "logs: SIGTERM"},
		} {
			if index(t, lines, pair.who, pair.cause) > index(t, lines, pair.who, pair.effect) {
				t.Errorf("scene %d: %s %q shown after %q", n+1, pair.who, pair.cause, pair.effect)
			}
		}
		if n < 2 { // the job ended by itself: job-signal wrote the done marker the sidecars act on
			for _, c := range []string{"proxy", "config", "logs"} {
				if index(t, lines, "job", `msg="done marker written"`) > index(t, lines, c, `msg="stopping the sidecar"`) {
					t.Errorf("scene %d: %s stops before the done marker is shown written", n+1, c)
				}
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

func TestParseLine(t *testing.T) {
	read := time.Date(2026, 1, 1, 0, 0, 1, 0, time.UTC)
	at := time.Date(2026, 1, 1, 0, 0, 0, 123456789, time.UTC)
	stamp := fmt.Sprint(at.UnixNano())
	for _, tc := range []struct {
		raw, who, text string
		at             time.Time
	}{
		{`{"time":"2026-01-01T00:00:00.123456789Z","level":"INFO","msg":"sidecar ready","prog":"sidecar-watch","sidecar":"proxy","how":"tcp 127.0.0.1:1 passed","took":"3ms"}`,
			"proxy", `level=INFO msg="sidecar ready" how="tcp 127.0.0.1:1 passed" took=3ms`, at},
		{`{"time":"2026-01-01T00:00:00.123456789Z","level":"INFO","msg":"job starting","prog":"job-signal","attempt":1,"waitFor":["proxy","config"],"after":[]}`,
			"job", `level=INFO msg="job starting" attempt=1 waitFor="[proxy config]" after=[]`, at},
		{"@" + stamp + " proxy: listening on 127.0.0.1:1", "proxy", "proxy: listening on 127.0.0.1:1", at},
		{"@" + stamp + " demo: job container exited with code 3", "demo", "job container exited with code 3", at},
		{`sidecar-watch: error: --name: bad`, "?", `sidecar-watch: error: --name: bad`, read},
		{`{"not":"a record"}`, "?", `{"not":"a record"}`, read},
		{`@nope proxy: x`, "?", `@nope proxy: x`, read},
	} {
		got := parseLine(tc.raw, read)
		if got.who != tc.who || got.text != tc.text || !got.at.Equal(tc.at) {
			t.Errorf("parseLine(%q) = %q, %q, %v; want %q, %q, %v", tc.raw, got.who, got.text, got.at, tc.who, tc.text, tc.at)
		}
	}
}

// TestLinesInTheOrderTheyHappened: a cause logged after its effect was
// written (sidecar-watch logs the signal it sent; the sidecar may answer
// first) is shown before it, by the stamps the writers gave.
func TestLinesInTheOrderTheyHappened(t *testing.T) {
	var out bytes.Buffer
	s, err := newStream(&out)
	if err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	answered := sent.Add(time.Millisecond)
	// Read in this order: the effect, then its cause, then a line of the
	// same moment as the effect, which keeps its place after it.
	fmt.Fprintf(s.w, "@%d config: SIGTERM, bye\n", answered.UnixNano())
	fmt.Fprintf(s.w, `{"time":%q,"level":"INFO","msg":"sent stop signal","prog":"sidecar-watch","sidecar":"config","signal":"TERM"}`+"\n", sent.Format(time.RFC3339Nano))
	fmt.Fprintf(s.w, "@%d logs: SIGTERM, flushing\n", answered.UnixNano())
	s.close()
	got := out.String()
	cause, effect, same := strings.Index(got, "sent stop signal"), strings.Index(got, "config: SIGTERM"), strings.Index(got, "logs: SIGTERM")
	if cause < 0 || effect < 0 || same < 0 || !(cause < effect && effect < same) {
		t.Errorf("not in the order of the stamps:\n%s", got)
	}
}
