// Package sidecarspec decides what a sidecar's settings may be: the values
// of sidecar-watch's --ready-*, --quit-url, --stop-signal, --grace and
// --restart flags, whether a person types them or inject writes them from
// job-signal.dev/ annotations. sidecar-watch checks its flags with these
// functions and inject checks the annotations with the same ones, so
// anything inject writes, sidecar-watch accepts.
//
// Standard library only: it is part of sidecar-watch, which is copied into
// every Pod, and of inject.
package sidecarspec

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// TCPAddr checks a --ready-tcp value: HOST:PORT with a host and a numeric
// port (a port name would need /etc/services, which distroless images lack).
func TCPAddr(v string) (string, error) {
	host, port, err := net.SplitHostPort(v)
	if err != nil {
		return "", fmt.Errorf("want HOST:PORT such as 127.0.0.1:5432, got %q", v)
	}
	if host == "" {
		return "", fmt.Errorf("want HOST:PORT such as 127.0.0.1:5432, got %q (no host: name the address the sidecar listens on, usually 127.0.0.1)", v)
	}
	if err := checkPort(port); err != nil {
		return "", fmt.Errorf("want HOST:PORT such as 127.0.0.1:5432, got %q: %w", v, err)
	}
	return v, nil
}

func checkPort(port string) error {
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
		return fmt.Errorf("the port must be a number from 1 to 65535, got %q", port)
	}
	return nil
}

// HTTPURL checks a --ready-http or --quit-url value: a plain http:// URL
// with a host, an optional numeric port, and no user information.
// sidecar-watch's client is a minimal HTTP/1.1 one for endpoints on the
// Pod's loopback: no TLS (for a TLS port, probe with --ready-tcp).
func HTTPURL(v string) (*url.URL, error) {
	if !strings.Contains(v, "://") {
		return nil, fmt.Errorf("want an http:// URL such as http://127.0.0.1:15000/ready, got %q", v)
	}
	u, err := url.Parse(v)
	if err != nil {
		return nil, fmt.Errorf("want an http:// URL: %w", err)
	}
	switch {
	case u.Scheme == "https":
		return nil, fmt.Errorf("https is not supported, got %q: sidecar endpoints on the Pod's loopback are plain http; for a TLS port use a TCP readiness check", v)
	case u.Scheme != "http":
		return nil, fmt.Errorf("want an http:// URL, got %q", v)
	case u.User != nil:
		return nil, fmt.Errorf("user information in the URL is not supported, got %q", u.Redacted()) // the password hidden
	case u.Hostname() == "":
		return nil, fmt.Errorf("want an http:// URL with a host, got %q", v)
	}
	if port := u.Port(); port != "" {
		if err := checkPort(port); err != nil {
			return nil, fmt.Errorf("URL %q: %w", v, err)
		}
	}
	return u, nil
}

// File checks a --ready-file value: a path (relative to the sidecar's
// working directory unless absolute).
func File(v string) (string, error) {
	if v == "" || strings.ContainsRune(v, 0) {
		return "", fmt.Errorf("want a file path, got %q", v)
	}
	return v, nil
}

// Exec checks a --ready-exec value and returns the command line it runs:
// a JSON array of strings (["pg_isready","-h","127.0.0.1"], exact, as an
// exec probe's command is written), or words separated by spaces (no shell,
// no quoting). The program is run directly, never through a shell.
func Exec(v string) ([]string, error) {
	var argv []string
	if strings.HasPrefix(strings.TrimSpace(v), "[") {
		if err := json.Unmarshal([]byte(v), &argv); err != nil {
			return nil, fmt.Errorf("want a JSON array of strings such as [\"pg_isready\",\"-h\",\"127.0.0.1\"]: %w", err)
		}
	} else {
		argv = strings.Fields(v)
	}
	if len(argv) == 0 || argv[0] == "" {
		return nil, fmt.Errorf("want a command such as pg_isready -h 127.0.0.1, got %q", v)
	}
	for _, a := range argv {
		if strings.ContainsRune(a, 0) {
			return nil, errors.New("a command word contains a NUL byte")
		}
	}
	return argv, nil
}

// stopSignals are the signals --stop-signal accepts, in the order help
// texts list them.
var stopSignals = []struct {
	name string
	sig  syscall.Signal
}{
	{"TERM", syscall.SIGTERM}, {"INT", syscall.SIGINT}, {"QUIT", syscall.SIGQUIT}, {"HUP", syscall.SIGHUP},
	{"USR1", syscall.SIGUSR1}, {"USR2", syscall.SIGUSR2}, {"KILL", syscall.SIGKILL},
}

// StopSignalNames lists the names StopSignal accepts, without SIG.
func StopSignalNames() []string {
	names := make([]string, len(stopSignals))
	for i, s := range stopSignals {
		names[i] = s.name
	}
	return names
}

// StopSignal checks a --stop-signal value: a name from StopSignalNames, in
// any case, with or without SIG ("TERM", "SIGTERM", "term").
func StopSignal(v string) (syscall.Signal, error) {
	upper := strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(v)), "SIG")
	for _, s := range stopSignals {
		if s.name == upper {
			return s.sig, nil
		}
	}
	return 0, fmt.Errorf("unknown signal %q: use one of %s", v, strings.Join(StopSignalNames(), ", "))
}

// Restart checks a --restart value.
func Restart(v string) error {
	if v != "Always" && v != "Never" {
		return fmt.Errorf("want Always or Never, got %q", v)
	}
	return nil
}

// Duration checks a duration value: Go's notation (30s, 2m, 1h30m), not
// negative. Whether 0 is allowed is the flag's own rule.
func Duration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("want a duration such as 30s or 2m, got %q", v)
	}
	return d, nil
}
