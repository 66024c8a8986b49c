// Package hostileclient holds connections to an HTTPS server open the way
// a client that means harm would, for tests of the server's bounds: real
// TCP connections, each playing one trick (a TLS handshake never
// finished, headers or a body sent a byte a second, a length declared and
// never sent), each opened again as soon as the server closes it, as an
// attacker's client would. It counts how long the server held each one.
package hostileclient

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"time"
)

// A Trick is how one connection misbehaves.
type Trick string

// The tricks.
const (
	// SilentTCP opens a TCP connection and sends nothing: not even the
	// TLS handshake starts.
	SilentTCP Trick = "silent-tcp"
	// HalfOpenTLS sends the first half of a TLS ClientHello and nothing
	// more: the handshake never finishes.
	HalfOpenTLS Trick = "half-open-tls"
	// SlowHeaders finishes the handshake, then sends a request's headers
	// one byte a second.
	SlowHeaders Trick = "slow-headers"
	// LyingLength sends a POST's headers declaring Declared bytes of body,
	// then one byte of it, and nothing more.
	LyingLength Trick = "lying-length"
	// SlowBody declares Declared bytes of body and sends them one byte a
	// second.
	SlowBody Trick = "slow-body"
	// StalledBulk declares Declared bytes of body, sends half of them at
	// once and then nothing: it holds the most a client can make the
	// server keep.
	StalledBulk Trick = "stalled-bulk"
)

// Tricks lists every trick.
var Tricks = []Trick{SilentTCP, HalfOpenTLS, SlowHeaders, LyingLength, SlowBody, StalledBulk}

// Declared is the body length the body tricks announce: 2.5 MiB, within
// any bound on an AdmissionReview (the API server sends up to 3 MiB).
const Declared = 5 << 19

// drip is the pace of the slow tricks.
const drip = time.Second

// Attack is a set of hostile connections kept open until Stop.
type Attack struct {
	addr, path string
	tls        *tls.Config
	stop       chan struct{}
	wg         sync.WaitGroup

	mu     sync.Mutex
	open   map[Trick]int             // connected now (TCP, and TLS where the trick finishes it)
	opened int                       // connections opened so far
	held   map[Trick][]time.Duration // how long the server held each one it closed
	failed map[Trick]error           // the last dial that failed
}

// Start opens n connections of each trick to addr (host:port; path is
// the request's, /mutate), with config for the tricks that finish the
// TLS handshake, and keeps them open: each one the server closes is
// opened again.
func Start(addr, path string, config *tls.Config, n int, tricks ...Trick) *Attack {
	a := &Attack{addr: addr, path: path, tls: config, stop: make(chan struct{}),
		open: map[Trick]int{}, held: map[Trick][]time.Duration{}, failed: map[Trick]error{}}
	for _, trick := range tricks {
		for range n {
			a.wg.Go(func() { a.keep(trick) })
		}
	}
	return a
}

// Stop closes every connection and returns once they are closed.
func (a *Attack) Stop() {
	select {
	case <-a.stop:
	default:
		close(a.stop)
	}
	a.wg.Wait()
}

// Open is how many connections are open now, all tricks together.
func (a *Attack) Open() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, v := range a.open {
		n += v
	}
	return n
}

// Opened is how many connections were opened so far, all tricks
// together.
func (a *Attack) Opened() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.opened
}

// Held is, for each trick, how long the server held the connections it
// closed, in the order it closed them.
func (a *Attack) Held() map[Trick][]time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[Trick][]time.Duration{}
	for k, v := range a.held {
		out[k] = slices.Clone(v)
	}
	return out
}

// Err is the last error opening a connection, if any.
func (a *Attack) Err() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	for trick, err := range a.failed {
		return fmt.Errorf("%s: %w", trick, err)
	}
	return nil
}

// keep plays trick on one connection after another until Stop.
func (a *Attack) keep(trick Trick) {
	for {
		select {
		case <-a.stop:
			return
		default:
		}
		conn, err := a.dial(trick)
		if err != nil {
			a.mu.Lock()
			a.failed[trick] = err
			a.mu.Unlock()
			select {
			case <-a.stop:
				return
			case <-time.After(100 * time.Millisecond): // the server refused: try again, as an attacker would
			}
			continue
		}
		a.mu.Lock()
		a.open[trick]++
		a.opened++
		a.mu.Unlock()
		opened := time.Now()
		closed := a.play(trick, conn)
		conn.Close()
		a.mu.Lock()
		a.open[trick]--
		if closed {
			a.held[trick] = append(a.held[trick], time.Since(opened))
		}
		a.mu.Unlock()
	}
}

// dial opens a connection for trick: TCP alone for the tricks that never
// finish the handshake, TLS for the others.
func (a *Attack) dial(trick Trick) (net.Conn, error) {
	raw, err := net.DialTimeout("tcp", a.addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	if trick == SilentTCP || trick == HalfOpenTLS {
		return raw, nil
	}
	config := a.tls.Clone()
	if config.ServerName == "" {
		config.ServerName, _, _ = net.SplitHostPort(a.addr)
	}
	conn := tls.Client(raw, config)
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if err := conn.Handshake(); err != nil {
		raw.Close()
		return nil, err
	}
	conn.SetDeadline(time.Time{})
	return conn, nil
}

// play misbehaves on conn until the server closes it (true) or Stop
// (false).
func (a *Attack) play(trick Trick, conn net.Conn) bool {
	closed := make(chan struct{})
	go func() { // the server's end: whatever it answers, until it closes
		io.Copy(io.Discard, conn)
		close(closed)
	}()
	headers := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
		a.path, a.addr, Declared)
	var slow []byte // sent a byte at a time
	switch trick {
	case HalfOpenTLS:
		conn.Write(clientHelloStart)
	case SlowHeaders:
		slow = []byte(headers)
	case LyingLength:
		conn.Write([]byte(headers + "{"))
	case SlowBody:
		conn.Write([]byte(headers))
		slow = make([]byte, Declared)
		slow[0] = '{'
		for i := 1; i < len(slow); i++ {
			slow[i] = ' '
		}
	case StalledBulk:
		bulk := make([]byte, Declared/2)
		bulk[0] = '{'
		for i := 1; i < len(bulk); i++ {
			bulk[i] = ' '
		}
		conn.Write(append([]byte(headers), bulk...))
	}
	tick := time.NewTicker(drip)
	defer tick.Stop()
	for {
		select {
		case <-closed:
			return true
		case <-a.stop:
			conn.Close()
			<-closed
			return false
		case <-tick.C:
			if len(slow) > 0 {
				conn.Write(slow[:1])
				slow = slow[1:]
			}
		}
	}
}

// clientHelloStart is the start of a TLS record holding a ClientHello:
// the record's header announces 512 bytes, and fewer follow.
var clientHelloStart = []byte{
	0x16, 0x03, 0x01, 0x02, 0x00, // handshake record, TLS 1.0 framing, 512 bytes
	0x01, 0x00, 0x01, 0xfc, // ClientHello, 508 bytes
	0x03, 0x03, // TLS 1.2
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, // half of the random
}
