package probe

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestHTTP(t *testing.T) {
	var gotMethod, gotURI, gotHost string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotMethod, gotURI, gotHost = r.Method, r.RequestURI, r.Host
		switch r.URL.Path {
		case "/ok":
			w.WriteHeader(204)
		case "/redirect":
			http.Redirect(w, r, "/ok", http.StatusFound)
		default:
			http.Error(w, "no", 503)
		}
	}))
	defer srv.Close()

	p, err := NewHTTP(srv.URL + "/ok?x=1")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check(ctx(t)); err != nil {
		t.Fatalf("2xx: %v", err)
	}
	if gotMethod != "GET" || gotURI != "/ok?x=1" || gotHost != strings.TrimPrefix(srv.URL, "http://") {
		t.Errorf("request: %s %s host %s", gotMethod, gotURI, gotHost)
	}
	for _, path := range []string{"/down", "/redirect"} {
		p, _ := NewHTTP(srv.URL + path)
		if err := p.Check(ctx(t)); err == nil || !strings.Contains(err.Error(), "status") {
			t.Errorf("%s: got %v, want a status error", path, err)
		}
	}
	status, err := p.Do(ctx(t), "POST")
	if err != nil || status != 204 || gotMethod != "POST" {
		t.Errorf("POST: %d %v (%s)", status, err, gotMethod)
	}
}

func TestHTTPNotHTTP(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err == nil {
			c.Write([]byte("SSH-2.0-OpenSSH\r\n"))
			c.Close()
		}
	}()
	p, _ := NewHTTP("http://" + l.Addr().String() + "/")
	if err := p.Check(ctx(t)); err == nil || !strings.Contains(err.Error(), "not an HTTP response") {
		t.Fatalf("got %v", err)
	}
}

func TestNewHTTPRejects(t *testing.T) {
	for _, u := range []string{"https://x/", "ftp://x/", "127.0.0.1:80", "http://", "http://u:p@x/", "::"} {
		if _, err := NewHTTP(u); err == nil {
			t.Errorf("NewHTTP(%q): want an error", u)
		}
	}
	p, err := NewHTTP("http://[::1]/quit")
	if err != nil || p.host != "[::1]:80" || hostHeader(p.host) != "[::1]" || p.request != "/quit" {
		t.Errorf("IPv6 default port: %+v %v", p, err)
	}
}

func TestParseStatusLine(t *testing.T) {
	for line, want := range map[string]int{"HTTP/1.1 200 OK": 200, "HTTP/1.0 503 Service Unavailable": 503, "HTTP/1.1 204": 204} {
		if got, err := parseStatusLine(line); err != nil || got != want {
			t.Errorf("%q: %d %v", line, got, err)
		}
	}
	for _, line := range []string{"", "HTTP/1.1", "HTTP/1.1 2000 OK", "HTTP/1.1 abc", "ICY 200 OK", "HTTP/1.1 099 x"} {
		if _, err := parseStatusLine(line); err == nil {
			t.Errorf("%q: want an error", line)
		}
	}
}

func TestTCPAndFile(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewTCP(l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check(ctx(t)); err != nil {
		t.Errorf("open port: %v", err)
	}
	l.Close()
	if err := p.Check(ctx(t)); err == nil {
		t.Error("closed port: want an error")
	}
	for _, bad := range []string{"localhost", ":80", "host:"} {
		if _, err := NewTCP(bad); err == nil {
			t.Errorf("NewTCP(%q): want an error", bad)
		}
	}
	path := filepath.Join(t.TempDir(), "ready")
	f := File{Path: path}
	if err := f.Check(ctx(t)); err == nil {
		t.Error("missing file: want an error")
	}
	os.WriteFile(path, nil, 0o600)
	if err := f.Check(ctx(t)); err != nil {
		t.Errorf("file exists: %v", err)
	}
}

// Loop reports failures while it waits and returns once the check passes.
func TestLoop(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ready")
	failures := make(chan error, 1)
	done := make(chan error, 1)
	go func() { done <- Loop(ctx(t), File{Path: path}, time.Millisecond, time.Second, failures) }()
	select {
	case err := <-failures:
		if !strings.Contains(err.Error(), "does not exist yet") {
			t.Errorf("failure: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no failure reported")
	}
	os.WriteFile(path, nil, 0o600)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Loop did not return after the check passed")
	}
}

// endless is a server's answer that never ends its status line.
type endless struct{ read int }

func (e *endless) Read(p []byte) (int, error) {
	copy(p, bytes.Repeat([]byte("A"), len(p)))
	if e.read == 0 && len(p) >= 13 {
		copy(p, "HTTP/1.1 200 ")
	}
	e.read += len(p)
	return len(p), nil
}

// A status line with no end must not be read without a bound.
func TestStatusLineBounded(t *testing.T) {
	r := &endless{}
	_, err := readStatus(r)
	if err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("readStatus of an endless line = %v, want an error about its length", err)
	}
	if r.read > 64<<10 {
		t.Fatalf("read %d bytes of an endless status line; want at most 64 KiB", r.read)
	}
}
