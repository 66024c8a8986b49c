package signalfs

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 123456789, time.UTC)

func TestJobStateRoundTrip(t *testing.T) {
	for _, s := range []JobState{
		{Attempt: 1, Phase: JobWaiting, RestartPolicy: RestartNever, Liveness: LivenessFlock, PID: 1, WaitFor: []string{"proxy", "db"}, Started: t0, Updated: t0},
		{Attempt: 2, Phase: JobRunning, RestartPolicy: RestartOnFailure, Liveness: LivenessNone, PID: 1, ChildPID: 7, Started: t0, Updated: t0},
		{Attempt: 3, Phase: JobDone, RestartPolicy: RestartNever, ExitCode: 143, Reason: ReasonSignaled, Signal: "TERM", Terminating: true, Message: "multi\nline\tmessage", Started: t0, Updated: t0},
		{Attempt: 1, Phase: JobDone, RestartPolicy: RestartNever, ExitCode: 0, Reason: ReasonExited},
	} {
		data, err := s.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var got JobState
		if err := got.UnmarshalText(data); err != nil {
			t.Fatalf("parse %q: %v", data, err)
		}
		// Control characters in messages are flattened on the way out.
		s.Message = strings.NewReplacer("\n", " ", "\t", " ").Replace(s.Message)
		if !reflect.DeepEqual(got, s) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, s)
		}
	}
}

func TestSidecarStateRoundTrip(t *testing.T) {
	for _, s := range []SidecarState{
		{Name: "proxy", Phase: SidecarReady, PID: 1, ChildPID: 9, Restarts: 2, After: []string{"a"}, StopAfter: []string{"b", "c"}, ExitCode: -1, Updated: t0},
		{Name: "p", Phase: SidecarStopped, ExitCode: 143, LastError: "sidecar killed by signal TERM"},
		{Name: "x-1", Phase: SidecarFailed, ExitCode: 0},
	} {
		data, err := s.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var got SidecarState
		if err := got.UnmarshalText(data); err != nil {
			t.Fatalf("parse %q: %v", data, err)
		}
		if !reflect.DeepEqual(got, s) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, s)
		}
	}
}

const goodJob = "job-signal v1 job\nattempt=1\nphase=done\nrestart-policy=Never\nexit-code=0\nreason=exited\n"

func TestParseRejectsMalformed(t *testing.T) {
	for name, content := range map[string]string{
		"empty":             "",
		"no final newline":  strings.TrimSuffix(goodJob, "\n"),
		"truncated line":    "job-signal v1 job\nattempt=1\nphase=do",
		"bad magic":         strings.Replace(goodJob, "job-signal", "kubexit", 1),
		"wrong kind":        strings.Replace(goodJob, " job\n", " sidecar\n", 1),
		"version 0":         strings.Replace(goodJob, " v1 ", " v0 ", 1),
		"version padded":    strings.Replace(goodJob, " v1 ", " v01 ", 1),
		"version junk":      strings.Replace(goodJob, " v1 ", " vx ", 1),
		"extra header":      strings.Replace(goodJob, " job\n", " job extra\n", 1),
		"no equals":         goodJob + "garbage\n",
		"empty key":         goodJob + "=x\n",
		"upper key":         goodJob + "Key=x\n",
		"key with space":    goodJob + "a b=x\n",
		"repeated key":      goodJob + "attempt=2\n",
		"missing attempt":   strings.Replace(goodJob, "attempt=1\n", "", 1),
		"missing phase":     strings.Replace(goodJob, "phase=done\n", "", 1),
		"bad phase":         strings.Replace(goodJob, "phase=done", "phase=finished", 1),
		"attempt zero":      strings.Replace(goodJob, "attempt=1", "attempt=0", 1),
		"attempt negative":  strings.Replace(goodJob, "attempt=1", "attempt=-4", 1),
		"attempt overflow":  strings.Replace(goodJob, "attempt=1", "attempt=99999999999999999999", 1),
		"exit code 256":     strings.Replace(goodJob, "exit-code=0", "exit-code=256", 1),
		"exit code missing": strings.Replace(goodJob, "exit-code=0\n", "", 1),
		"reason missing":    strings.Replace(goodJob, "reason=exited\n", "", 1),
		"bad policy":        strings.Replace(goodJob, "Never", "Always", 1),
		"bad bool":          goodJob + "terminating=yes\n",
		"bad time":          goodJob + "updated=yesterday\n",
		"bad wait-for":      goodJob + "wait-for=a,,b\n",
		"bad name in list":  goodJob + "wait-for=../etc\n",
		"control char":      goodJob + "message=a\x01b\n",
		"carriage return":   strings.Replace(goodJob, "\n", "\r\n", -1),
		"not utf8":          goodJob + "message=\xff\n",
		"huge":              goodJob + "message=" + strings.Repeat("x", MaxMarkerSize) + "\n",
		"long value":        goodJob + "message=" + strings.Repeat("x", maxValueLen+1) + "\n",
		"blank line":        goodJob + "\n",
	} {
		var s JobState
		err := s.UnmarshalText([]byte(content))
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: got %v, want an ErrMalformed", name, err)
		}
	}
}

func TestParseNewerVersion(t *testing.T) {
	var s JobState
	err := s.UnmarshalText([]byte(strings.Replace(goodJob, " v1 ", " v2 ", 1)))
	if !errors.Is(err, ErrNewerProtocol) {
		t.Fatalf("got %v, want ErrNewerProtocol", err)
	}
	if !strings.Contains(err.Error(), "upgrade job-signal and sidecar-watch together") {
		t.Errorf("error does not say what to do: %v", err)
	}
}

func TestParseIgnoresUnknownKeys(t *testing.T) {
	var s JobState
	if err := s.UnmarshalText([]byte(goodJob + "added-in-v1-9=whatever\n")); err != nil {
		t.Fatal(err)
	}
	if s.Phase != JobDone || s.Attempt != 1 {
		t.Errorf("got %+v", s)
	}
}

func TestSidecarNameMismatchRejected(t *testing.T) {
	var s SidecarState
	err := s.UnmarshalText([]byte("job-signal v1 sidecar\nname=Bad_Name\nphase=ready\n"))
	if !errors.Is(err, ErrMalformed) {
		t.Fatalf("got %v, want ErrMalformed", err)
	}
}

func FuzzParseJob(f *testing.F) {
	f.Add([]byte(goodJob))
	f.Add([]byte("job-signal v1 job\nattempt=2\nphase=running\nrestart-policy=OnFailure\npid=1\nwait-for=a,b\nstarted=2026-11-22T10:00:00Z\n"))
	f.Add([]byte("job-signal v9 job\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s JobState
		if err := s.UnmarshalText(data); err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrNewerProtocol) {
				t.Fatalf("error that is not ErrMalformed: %v", err)
			}
			return
		}
		// What parses re-encodes to something that parses to the same.
		again, err := s.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var s2 JobState
		if err := s2.UnmarshalText(again); err != nil {
			t.Fatalf("re-encoded state does not parse: %v\n%q", err, again)
		}
		if !reflect.DeepEqual(normalize(s), normalize(s2)) {
			t.Fatalf("round trip changed the state:\n%+v\n%+v", s, s2)
		}
	})
}

// normalize drops what the encoding legitimately does not keep: fields
// only meaningful when done, and sub-nanosecond/monotonic time details.
func normalize(s JobState) JobState {
	if s.Phase != JobDone {
		s.ExitCode, s.Reason, s.Signal, s.Terminating, s.Message = 0, "", "", false, ""
	}
	s.Started, s.Updated = s.Started.UTC(), s.Updated.UTC()
	return s
}

func FuzzParseSidecar(f *testing.F) {
	f.Add([]byte("job-signal v1 sidecar\nname=proxy\nphase=ready\nrestarts=1\nafter=a\nstop-after=b,c\nexit-code=143\nlast-error=x\n"))
	f.Add([]byte("job-signal v1 sidecar\nname=-bad\nphase=ready\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s SidecarState
		if err := s.UnmarshalText(data); err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrNewerProtocol) {
				t.Fatalf("error that is not ErrMalformed: %v", err)
			}
			return
		}
		if err := ValidName(s.Name); err != nil {
			t.Fatalf("parsed an invalid name %q", s.Name)
		}
		again, err := s.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var s2 SidecarState
		if err := s2.UnmarshalText(again); err != nil {
			t.Fatalf("re-encoded state does not parse: %v\n%q", err, again)
		}
		// What parses re-encodes to something that parses to the same.
		s.Updated, s2.Updated = s.Updated.UTC(), s2.Updated.UTC()
		if !reflect.DeepEqual(s, s2) {
			t.Fatalf("round trip changed the state:\n%+v\n%+v", s, s2)
		}
	})
}

// Structured values are never cut short (a reader would reject the file):
// encoding fails instead. Free text is cut.
func TestEncodeRefusesOverlongLists(t *testing.T) {
	long := strings.Repeat("a", 60)
	var names []string
	for i := 0; i < 20; i++ {
		names = append(names, long)
	}
	if _, err := (JobState{Attempt: 1, Phase: JobWaiting, RestartPolicy: RestartNever, WaitFor: names}).MarshalText(); err == nil {
		t.Fatal("want an error for a wait-for list over the value limit")
	}
	data, err := JobState{Attempt: 1, Phase: JobDone, RestartPolicy: RestartNever, Reason: ReasonError,
		Message: strings.Repeat("x", 5000)}.MarshalText()
	if err != nil {
		t.Fatal(err)
	}
	var s JobState
	if err := s.UnmarshalText(data); err != nil || !strings.HasSuffix(s.Message, "...") {
		t.Fatalf("long message: %v, %q", err, s.Message)
	}
}
