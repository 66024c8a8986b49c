package webhook

import (
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestConnsBounds: the tracker counts connections by state, and past 256
// waiting or 256 idle closes the oldest of that state for each new one,
// counting it dropped; a connection that becomes active leaves the count
// it was in, and is never dropped.
func TestConnsBounds(t *testing.T) {
	m := NewMetrics()
	tr := newConns(m)
	pipe := func() net.Conn {
		a, b := net.Pipe()
		t.Cleanup(func() { a.Close(); b.Close() })
		return a
	}
	closed := func(c net.Conn) bool {
		c.SetWriteDeadline(time.Now()) // an open pipe's write would wait for a reader
		_, err := c.Write([]byte{0})
		return errors.Is(err, io.ErrClosedPipe)
	}
	active := pipe()
	tr.track(active, http.StateNew)
	tr.track(active, http.StateActive)
	var idle []net.Conn
	for range 300 {
		c := pipe()
		tr.track(c, http.StateNew)
		tr.track(c, http.StateActive)
		tr.track(c, http.StateIdle)
		idle = append(idle, c)
	}
	for i, c := range idle {
		if got, want := closed(c), i < 300-256; got != want {
			t.Fatalf("idle connection %d of 300: closed %v, want %v", i, got, want)
		}
	}
	var waiting []net.Conn
	for range 260 {
		c := pipe()
		tr.track(c, http.StateNew)
		waiting = append(waiting, c)
	}
	for i, c := range waiting {
		if got, want := closed(c), i < 4; got != want {
			t.Fatalf("waiting connection %d of 260: closed %v, want %v", i, got, want)
		}
	}
	if closed(active) {
		t.Error("the active connection was dropped")
	}
	for _, c := range idle[:44] { // the server says so when it sees them closed
		tr.track(c, http.StateClosed)
	}
	wantMetrics(t, &Config{Metrics: m},
		`job_signal_webhook_connections{state="active"} 1`,
		`job_signal_webhook_connections{state="idle"} 256`,
		`job_signal_webhook_connections{state="waiting"} 256`,
		`job_signal_webhook_connections_dropped_total{state="idle"} 44`,
		`job_signal_webhook_connections_dropped_total{state="waiting"} 4`,
		`job_signal_webhook_connections_total 561`,
	)
	if len(tr.states) != 1+256+256+4 { // the 4 dropped waiting ones are not yet seen closed
		t.Errorf("%d connections tracked", len(tr.states))
	}
}
