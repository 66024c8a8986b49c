package probe

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// HTTP is ready when a GET of URL answers with a 2xx status.
//
// The client is a minimal HTTP/1.1 one of our own rather than net/http:
// sidecar endpoints (readiness, Envoy's and cloud-sql-proxy's
// /quitquitquit) are plain http on the Pod's loopback, and net/http with its
// TLS and HTTP/2 stacks would more than double sidecar-watch's size, a
// cost every user image pays. Redirects are not followed and connections
// are not reused, which is what a probe wants anyway.
type HTTP struct {
	URL     string
	host    string // HOST:PORT to dial
	request string // request target: path and query
}

// NewHTTP validates an http:// URL.
func NewHTTP(rawURL string) (HTTP, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return HTTP{}, err
	}
	if u.Scheme == "https" {
		return HTTP{}, fmt.Errorf("https is not supported (sidecar endpoints on the Pod's loopback are plain http); for a TLS port, use --ready-tcp")
	}
	if u.Scheme != "http" || u.Host == "" {
		return HTTP{}, fmt.Errorf("want an http:// URL, got %q", rawURL)
	}
	if u.User != nil {
		return HTTP{}, fmt.Errorf("user information in the URL is not supported")
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
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
	line, err := textproto.NewReader(bufio.NewReaderSize(conn, 512)).ReadLine()
	if err != nil {
		return 0, fmt.Errorf("%s %s: reading the response: %w", method, p.URL, err)
	}
	return parseStatusLine(line)
}

// parseStatusLine reads the code from "HTTP/1.1 200 OK".
func parseStatusLine(line string) (int, error) {
	proto, rest, ok := strings.Cut(line, " ")
	if !ok || !strings.HasPrefix(proto, "HTTP/") {
		return 0, fmt.Errorf("not an HTTP response: %q", clip(line))
	}
	codeText, _, _ := strings.Cut(rest, " ")
	code, err := strconv.Atoi(codeText)
	if err != nil || len(codeText) != 3 || code < 100 {
		return 0, fmt.Errorf("bad HTTP status line: %q", clip(line))
	}
	return code, nil
}

// hostHeader drops the default port, as browsers and net/http do.
func hostHeader(hostPort string) string {
	if h, port, err := net.SplitHostPort(hostPort); err == nil && port == "80" {
		if strings.Contains(h, ":") {
			return "[" + h + "]"
		}
		return h
	}
	return hostPort
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}
