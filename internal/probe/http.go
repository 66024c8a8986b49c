package probe

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/job-signal/job-signal/signalfs/sidecarspec"
)

// HTTP is ready when a GET of URL answers with a 2xx status.
//
// The client is a minimal HTTP/1.1 one of our own rather than net/http:
// sidecar endpoints (readiness, Envoy's and cloud-sql-proxy's
// /quitquitquit) are plain http on the Pod's loopback, and net/http with its
// TLS and HTTP/2 stacks would make sidecar-watch far bigger (the sizes are
// in the commit that chose this; BENCHMARKS.md has today's), a cost every
// user image pays. Redirects are not followed and connections are not
// reused, which is what a probe wants anyway.
type HTTP struct {
	URL     string
	host    string // HOST:PORT to dial
	request string // request target: path and query
}

// NewHTTP validates an http:// URL by sidecarspec's rule.
func NewHTTP(rawURL string) (HTTP, error) {
	u, err := sidecarspec.HTTPURL(rawURL)
	if err != nil {
		return HTTP{}, err
	}
	port := cmp.Or(u.Port(), "80")
	return HTTP{URL: rawURL, host: net.JoinHostPort(u.Hostname(), port), request: u.RequestURI()}, nil
}

func (p HTTP) Check(ctx context.Context) error {
	status, err := p.Do(ctx, "GET")
	if err != nil {
		return err
	}
	if status < 200 || status > 299 {
		return fmt.Errorf("GET %s: status %d", p.URL, status)
	}
	return nil
}

func (p HTTP) String() string { return "http " + p.URL }

// Do sends one request with an empty body and returns the response's
// status code; the body is not read.
func (p HTTP) Do(ctx context.Context, method string) (int, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", p.host)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		conn.SetDeadline(deadline)
	} else {
		conn.SetDeadline(time.Now().Add(time.Minute))
	}
	req := method + " " + p.request + " HTTP/1.1\r\n" +
		"Host: " + hostHeader(p.host) + "\r\n" +
		"User-Agent: sidecar-watch\r\n" +
		"Content-Length: 0\r\n" +
		"Connection: close\r\n\r\n"
	if _, err := conn.Write([]byte(req)); err != nil {
		return 0, fmt.Errorf("%s %s: %w", method, p.URL, err)
	}
	code, err := readStatus(conn)
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", method, p.URL, err)
	}
	return code, nil
}

// maxStatusLine bounds what is read of a response: only the status line
// ("HTTP/1.1 200 OK") matters, and a server that never ends it must cost
// a bounded read, not memory without end. Headers and body are not read.
const maxStatusLine = 1024

// readStatus reads the status line of a response and returns its code.
func readStatus(r io.Reader) (int, error) {
	br := bufio.NewReaderSize(io.LimitReader(r, maxStatusLine), maxStatusLine)
	line, err := br.ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull), errors.Is(err, io.EOF) && len(line) == maxStatusLine:
		return 0, fmt.Errorf("reading the response: status line longer than %d bytes: %.40q", maxStatusLine, line)
	case err != nil:
		return 0, fmt.Errorf("reading the response: %w", err)
	}
	return parseStatusLine(strings.TrimRight(string(line), "\r\n"))
}

// parseStatusLine reads the code from "HTTP/1.1 200 OK".
func parseStatusLine(line string) (int, error) {
	proto, rest, ok := strings.Cut(line, " ")
	if !ok || !strings.HasPrefix(proto, "HTTP/") {
		return 0, fmt.Errorf("not an HTTP response: %.60q", line)
	}
	codeText, _, _ := strings.Cut(rest, " ")
	code, err := strconv.Atoi(codeText)
	if err != nil || len(codeText) != 3 || code < 100 {
		return 0, fmt.Errorf("bad HTTP status line: %.60q", line)
	}
	return code, nil
}

// hostHeader drops the default port, as browsers and net/http do.
func hostHeader(hostPort string) string {
	if _, port, err := net.SplitHostPort(hostPort); err == nil && port == "80" {
		return strings.TrimSuffix(hostPort, ":80") // an IPv6 address keeps its brackets
	}
	return hostPort
}
