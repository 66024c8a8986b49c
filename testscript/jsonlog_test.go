package testscript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"
)

// With --log-format json, every line either program writes to stderr is
// one JSON object, the final error included, and each key has one type
// and one style everywhere: lowerCamelCase, durations as Go duration
// strings, lists as arrays.
func TestJSONLogs(t *testing.T) {
	t.Parallel()
	work := t.TempDir()
	dir := filepath.Join(work, "signal")
	env := append(os.Environ(), "JOB_SIGNAL_LOG_FORMAT=json", "JOB_SIGNAL_DIR="+dir, "JOB_SIGNAL_TERMINATION_LOG=")
	var logs [][]byte
	run := func(name string, wantCode int, args ...string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Env = env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		cmd.Stdout = os.Stdout
		err := cmd.Run()
		code := cmd.ProcessState.ExitCode()
		if err != nil && code < 0 {
			t.Fatalf("%s: %v", name, err)
		}
		if code != wantCode {
			t.Fatalf("%s %v: exit code %d, want %d\n%s", name, args, code, wantCode, stderr.String())
		}
		logs = append(logs, stderr.Bytes())
	}

	// A normal run: a sidecar with ordering, a job waiting for it.
	sidecarErr := filepath.Join(work, "sidecar.err")
	sidecar, done := background(t, env, sidecarErr, "sidecar-watch", "--name", "proxy", "--stop-after", "logs", "--ready-file", filepath.Join(work, "up"), "--", "fake", "-touch", filepath.Join(work, "up"))
	run("job-signal", 0, "--wait-for", "proxy", "--", "fake", "-exit", "0")
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("sidecar-watch: %v", err)
		}
	case <-time.After(waitLimit()):
		syscall.Kill(-sidecar.Process.Pid, syscall.SIGKILL)
		t.Fatal("sidecar-watch did not stop")
	}
	data, _ := os.ReadFile(sidecarErr)
	logs = append(logs, data)

	// A failing gate, and usage errors found by kong and before it.
	os.RemoveAll(dir)
	run("job-signal", 125, "--wait-for", "nobody", "--ready-timeout", "200ms", "--", "fake", "-touch", filepath.Join(work, "ran"))
	run("job-signal", 2, "--ready-timeout", "-1s", "--", "true")
	run("job-signal", 2, "stauts")
	run("sidecar-watch", 2, "--name", "proxy", "--ready-tcp", "5432", "--", "fake")

	types := map[string]string{} // key -> JSON type seen first
	lines := 0
	for _, log := range logs {
		sc := bufio.NewScanner(bytes.NewReader(log))
		for sc.Scan() {
			lines++
			var rec map[string]any
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Errorf("not a JSON object: %q: %v", sc.Text(), err)
				continue
			}
			for key, v := range rec {
				typ := jsonType(v)
				if prev, ok := types[key]; ok && prev != typ {
					t.Errorf("key %q is a %s here and a %s elsewhere: %s", key, typ, prev, sc.Text())
				}
				types[key] = typ
				if strings.ContainsAny(key, "_-") || !unicode.IsLower(rune(key[0])) {
					t.Errorf("key %q is not lowerCamelCase: %s", key, sc.Text())
				}
				if s, ok := v.(string); ok && durationKeys[key] {
					if _, err := time.ParseDuration(s); err != nil {
						t.Errorf("key %q holds %q, not a Go duration: %s", key, s, sc.Text())
					}
				} else if durationKeys[key] {
					t.Errorf("key %q holds %v, not a duration string: %s", key, v, sc.Text())
				}
			}
		}
	}
	for key, want := range map[string]string{"exitCode": "number", "attempt": "number", "waitFor": "array", "after": "array", "stopAfter": "array", "command": "array", "err": "string", "level": "string"} {
		if got, ok := types[key]; !ok || got != want {
			t.Errorf("key %q: type %q, want %q (seen: %v)", key, got, want, types)
		}
	}
	if lines < 20 {
		t.Errorf("only %d log lines checked", lines)
	}
	var final map[string]any
	json.Unmarshal(bytes.TrimSpace(lastLine(logs[2])), &final)
	if final["level"] != "ERROR" || final["exitCode"] != float64(125) {
		t.Errorf("the failing gate's last line is not its error at level ERROR: %v", final)
	}
}

// durationKeys are the keys that hold durations.
var durationKeys = map[string]bool{"readyTimeout": true, "waited": true, "elapsed": true, "took": true, "ranFor": true,
	"atMost": true, "restartIn": true, "afterTimeout": true, "stopAfterTimeout": true, "grace": true,
	"pollInterval": true, "jobStartTimeout": true}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case []any:
		return "array"
	case nil:
		return "null"
	}
	return "object"
}

func lastLine(b []byte) []byte {
	b = bytes.TrimSpace(b)
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		return b[i+1:]
	}
	return b
}
