package webhook

import (
	"container/list"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
)

// The bounds on connections that are not answering a request. Each one
// costs the webhook a goroutine and some 10 to 20 KiB, for as long as
// HeaderTimeout (waiting) or the server's IdleTimeout (idle): without a
// bound on their number, a client that opens them faster than they time
// out would grow the webhook past its memory limit.
const (
	// maxWaitingConns bounds the connections in their TLS handshake or
	// before their first request's headers. An API server's connection is
	// waiting for milliseconds: the oldest waiting one is closed for a new
	// one over the bound, so only a client that opens them by the hundred
	// within those milliseconds could have one of the API server's closed.
	maxWaitingConns = 256
	// maxIdleConns bounds the connections kept alive between requests. An
	// API server keeps at most 25 idle connections to a webhook
	// (client-go's transport); the least recently used one is closed for
	// a new one over the bound.
	maxIdleConns = 256
)

// conns tracks the HTTPS listener's connections by state (its ConnState
// hook): it counts them in the metrics and closes the oldest waiting or
// idle one over its bound. Connections answering a request are bounded by
// time instead (BodyTimeout, RequestTimeout).
type conns struct {
	metrics *Metrics

	mu      sync.Mutex
	states  map[net.Conn]*connEntry
	waiting list.List // of net.Conn, oldest first
	idle    list.List // likewise
	active  int
}

type connEntry struct {
	state http.ConnState
	at    *list.Element // in waiting or idle; nil when active
}

func newConns(m *Metrics) *conns {
	return &conns{metrics: m, states: map[net.Conn]*connEntry{}}
}

// track is the server's ConnState hook.
func (t *conns) track(c net.Conn, state http.ConnState) {
	var drop net.Conn
	var dropState string // its state: the dropped metric's label
	t.mu.Lock()
	e := t.states[c]
	if e == nil {
		e = &connEntry{}
		t.states[c] = e
	}
	t.leave(e)
	e.state = state
	switch state {
	case http.StateNew:
		t.metrics.connections.Inc()
		e.at = t.waiting.PushBack(c)
		if t.waiting.Len() > maxWaitingConns {
			drop, dropState = t.waiting.Front().Value.(net.Conn), "waiting"
		}
	case http.StateActive:
		t.active++
	case http.StateIdle:
		e.at = t.idle.PushBack(c)
		if t.idle.Len() > maxIdleConns {
			drop, dropState = t.idle.Front().Value.(net.Conn), "idle"
		}
	default: // closed, hijacked
		delete(t.states, c)
	}
	if drop != nil { // out of its list now: it is closing, and is not dropped twice
		t.metrics.dropped.WithLabelValues(dropState).Inc()
		t.leave(t.states[drop])
	}
	t.gauges()
	t.mu.Unlock()
	if drop != nil {
		closeNow(drop)
	}
}

// leave takes e out of the state it was in.
func (t *conns) leave(e *connEntry) {
	switch {
	case e.at != nil && e.state == http.StateNew:
		t.waiting.Remove(e.at)
	case e.at != nil && e.state == http.StateIdle:
		t.idle.Remove(e.at)
	case e.state == http.StateActive:
		t.active--
	}
	e.at = nil
	e.state = -1
}

func (t *conns) gauges() {
	t.metrics.open.WithLabelValues("waiting").Set(float64(t.waiting.Len()))
	t.metrics.open.WithLabelValues("active").Set(float64(t.active))
	t.metrics.open.WithLabelValues("idle").Set(float64(t.idle.Len()))
}

// closeNow closes c without the TLS close alert, which could wait on a
// client that does not read: the server's goroutine for it then ends.
func closeNow(c net.Conn) {
	if tc, ok := c.(*tls.Conn); ok {
		tc.NetConn().Close()
		return
	}
	c.Close()
}
