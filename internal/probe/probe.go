// Package probe checks whether a sidecar is ready: a TCP port accepts
// connections, an HTTP endpoint answers 2xx, or a file exists.
package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"
)

// Probe is one readiness check.
type Probe interface {
	// Check returns nil when the sidecar is ready, or why it is not.
	Check(ctx context.Context) error
	String() string
}

// TCP is ready when HOST:PORT accepts a connection.
type TCP struct{ Addr string }

// NewTCP validates HOST:PORT.
func NewTCP(addr string) (TCP, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return TCP{}, fmt.Errorf("want HOST:PORT: %w", err)
	}
	if host == "" {
		return TCP{}, fmt.Errorf("want HOST:PORT, got %q (no host)", addr)
	}
	if port == "" {
		return TCP{}, fmt.Errorf("want HOST:PORT, got %q (no port)", addr)
	}
	return TCP{Addr: addr}, nil
}

func (p TCP) Check(ctx context.Context) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", p.Addr)
	if err != nil {
		return err
	}
	return conn.Close()
}

func (p TCP) String() string { return "tcp " + p.Addr }

// HTTP is ready when a GET of URL answers with a 2xx status.
type HTTP struct {
	URL    string
	client *http.Client
}

// NewHTTP validates an http or https URL.
func NewHTTP(rawURL string) (HTTP, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return HTTP{}, err
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return HTTP{}, fmt.Errorf("want an http:// or https:// URL, got %q", rawURL)
	}
	// Probes must not be fooled by a redirect to somewhere that answers 200,
	// nor reuse a connection to a server that is restarting.
	client := &http.Client{
		Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	return HTTP{URL: rawURL, client: client}, nil
}

func (p HTTP) Check(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL, nil)
	if err != nil {
		return err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("GET %s: status %s", p.URL, resp.Status)
	}
	return nil
}

func (p HTTP) String() string { return "http " + p.URL }

// File is ready when PATH exists.
type File struct{ Path string }

func (p File) Check(context.Context) error {
	_, err := os.Stat(p.Path)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s does not exist yet", p.Path)
	}
	return err
}

func (p File) String() string { return "file " + p.Path }

// Loop runs p every interval until it passes or ctx ends. Each failure is
// sent on failures (dropped if the receiver is busy: only the latest
// matters); it returns nil once the probe passed, or ctx's error.
func Loop(ctx context.Context, p Probe, interval, timeout time.Duration, failures chan<- error) error {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		checkCtx, cancel := context.WithTimeout(ctx, timeout)
		err := p.Check(checkCtx)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		select {
		case failures <- err:
		default:
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ticker.C:
		}
	}
}
