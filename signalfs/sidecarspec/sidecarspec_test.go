package sidecarspec

import (
	"slices"
	"strings"
	"syscall"
	"testing"
)

func TestTCPAddr(t *testing.T) {
	for _, tc := range []struct {
		in, err string
	}{
		{"127.0.0.1:5432", ""},
		{"localhost:5432", ""},
		{"[::1]:5432", ""},
		{":5432", "no host"},
		{"127.0.0.1", "want HOST:PORT"},
		{"127.0.0.1:", "port must be a number"},
		{"127.0.0.1:postgres", "port must be a number"},
		{"127.0.0.1:0", "port must be a number"},
		{"127.0.0.1:65536", "port must be a number"},
		{"127.0.0.1:05432", "port must be a number"},
	} {
		_, err := TCPAddr(tc.in)
		checkErr(t, tc.in, err, tc.err)
	}
}

func TestHTTPURL(t *testing.T) {
	for _, tc := range []struct {
		in, err string
	}{
		{"http://127.0.0.1:15000/ready", ""},
		{"http://localhost/healthz?full=1", ""},
		{"http://[::1]:9090/", ""},
		{"https://127.0.0.1:15000/ready", "https is not supported"},
		{"http://user:secret@127.0.0.1/", "user information"},
		{"http://user@127.0.0.1/", "user information"},
		{"http:///ready", "with a host"},
		{"http://127.0.0.1:http/", "want an http:// URL"},
		{"http://127.0.0.1:70000/", "port must be a number"},
		{"127.0.0.1:15000/ready", "want an http:// URL"},
		{"ftp://127.0.0.1/", "want an http:// URL"},
	} {
		_, err := HTTPURL(tc.in)
		checkErr(t, tc.in, err, tc.err)
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("%q: the error shows the password: %v", tc.in, err)
		}
	}
}

func TestExec(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  string
	}{
		{`pg_isready -h 127.0.0.1`, []string{"pg_isready", "-h", "127.0.0.1"}, ""},
		{`["pg_isready","-d","dbname=a b"]`, []string{"pg_isready", "-d", "dbname=a b"}, ""},
		{` ["x"]`, []string{"x"}, ""},
		{``, nil, "want a command"},
		{`[]`, nil, "want a command"},
		{`[""]`, nil, "want a command"},
		{`["a",1]`, nil, "JSON array of strings"},
		{`["a\u0000b"]`, nil, "NUL"},
	} {
		got, err := Exec(tc.in)
		checkErr(t, tc.in, err, tc.err)
		if err == nil && !slices.Equal(got, tc.want) {
			t.Errorf("Exec(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestStopSignal(t *testing.T) {
	for _, name := range []string{"TERM", "SIGTERM", "term", " sigterm "} {
		if sig, err := StopSignal(name); err != nil || sig != syscall.SIGTERM {
			t.Errorf("%q: %v %v", name, sig, err)
		}
	}
	for _, name := range []string{"URG", "CHLD", "", "9"} {
		if _, err := StopSignal(name); err == nil {
			t.Errorf("%q accepted as a stop signal", name)
		}
	}
	if got := StopSignalNames(); !slices.Equal(got, []string{"TERM", "INT", "QUIT", "HUP", "USR1", "USR2", "KILL"}) {
		t.Errorf("StopSignalNames() = %v", got)
	}
}

func TestSmallRules(t *testing.T) {
	checkErr(t, "Restart(Always)", Restart("Always"), "")
	checkErr(t, "Restart(always)", Restart("always"), "want Always or Never")
	_, err := Duration("0")
	checkErr(t, "Duration(0)", err, "")
	_, err = Duration("-1s")
	checkErr(t, "Duration(-1s)", err, "want a duration")
	_, err = Duration("10")
	checkErr(t, "Duration(10)", err, "want a duration")
	_, err = File("")
	checkErr(t, "File()", err, "want a file path")
	_, err = File("ready")
	checkErr(t, "File(ready)", err, "")
}

func checkErr(t *testing.T, in string, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Errorf("%q: unexpected error %v", in, err)
	case want != "" && err == nil:
		t.Errorf("%q: accepted, want an error with %q", in, want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Errorf("%q: error %q, want it to contain %q", in, err, want)
	}
}
