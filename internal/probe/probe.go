// Package probe checks whether a sidecar is ready: a TCP port accepts
// connections, an HTTP endpoint answers 2xx, a file exists, or a command
// exits 0.
package probe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/job-signal/job-signal/signalfs/sidecarspec"
)

// Probe is one readiness check.
type Probe interface {
	// Check returns nil when the sidecar is ready, or why it is not.
	Check(ctx context.Context) error
	String() string
}

// TCP is ready when HOST:PORT accepts a connection.
type TCP struct{ Addr string }

// NewTCP validates HOST:PORT by sidecarspec's rule.
func NewTCP(addr string) (TCP, error) {
	if _, err := sidecarspec.TCPAddr(addr); err != nil {
		return TCP{}, err
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

// firstInterval is the delay after the first failed check. Delays double
// from it up to the caller's interval, so a sidecar that is up within
// milliseconds is seen within milliseconds, while a slow one is not
// hammered.
const firstInterval = 5 * time.Millisecond

// Loop runs p until it passes or ctx ends, waiting between checks from
// firstInterval doubling up to interval. Each failure is sent on failures
// (dropped if the receiver is busy: only the latest matters); it returns
// nil once the probe passed, or ctx's error.
func Loop(ctx context.Context, p Probe, interval, timeout time.Duration, failures chan<- error) error {
	delay := min(firstInterval, interval)
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
		wait := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			wait.Stop()
			return ctx.Err()
		case <-wait.C:
		}
		delay = min(2*delay, interval)
	}
}
