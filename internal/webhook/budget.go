package webhook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Errors of readBody.
var (
	// errNoRoom: a body's next bytes found no room in bodyBudget in time.
	errNoRoom = errors.New("no room for the body")
	// errStalled: a body stopped coming, and its room went to another.
	errStalled = errors.New("the body stopped coming and its room went to another request")
)

// readBody reads a request's body as its bytes arrive: its buffer grows
// to at most twice what came (firstRead before anything has), and each
// growth first takes its share of c.bodies. declared, the Content-Length
// (-1: none), and maxBody cap the buffer. release gives the share back,
// once the body is let go.
//
// While it reads, the body may be cut for another that needs room (cut
// ends its read at once): see budget. ctx bounds the wait for room
// (errNoRoom).
func (c *Config) readBody(ctx context.Context, r io.Reader, declared int64, cut func()) (body []byte, release func(), err error) {
	rd := c.bodies.reading(cut, declared >= 0 && declared <= smallBody)
	defer c.bodies.done(rd)
	release = func() { c.bodies.give(rd) }
	for {
		if declared >= 0 && int64(len(body)) == declared {
			// All of it came, and nothing may cut it now: its last read,
			// which sees the end, starts the server's read of what
			// follows, which a cut would end (and the request with it).
			c.bodies.done(rd)
		}
		if len(body) == cap(body) {
			// One byte more than the most it may have, to read its end
			// (or MaxBytesReader's error) into.
			size := min(int64(max(2*cap(body), firstRead)), maxBody+1)
			if declared >= 0 {
				size = min(size, declared+1)
			}
			grow := size - int64(cap(body))
			if err := c.bodies.take(ctx, rd, grow); err != nil {
				return body, release, err
			}
			body = append(make([]byte, 0, size), body...)
		}
		n, err := r.Read(body[len(body):cap(body)])
		if n > 0 {
			body = body[:len(body)+n]
			rd.last.Store(time.Now().UnixNano())
		}
		switch {
		case err == io.EOF:
			return body, release, nil
		case err != nil && rd.cut.Load():
			return body, release, errStalled
		case err != nil:
			return body, release, err
		}
	}
}

// The rule of who gives way when bodies fill the budget.
const (
	// smallBody is the most a request may declare and still cut others'
	// bodies for room: the API server's reviews of ordinary Pods, a few
	// KiB. A larger one waits for room, so that a client that sends much
	// and stalls cannot cut others like it at the pace it reconnects.
	smallBody = 64 << 10
	// stalledFor is how long a body must have gone without a byte to be
	// cut: a body the API server sends comes at the pace of the network,
	// in one write.
	stalledFor = 250 * time.Millisecond
)

// budget is the bytes of request bodies held at once, and the bodies
// being read. A share that fits is taken at once, whoever waits for a
// larger one (x/sync's semaphore serves waiters in turn, so one waiting
// for a large share would hold every small one up behind it). A small
// request whose share does not fit cuts bodies that have gone stalledFor
// without a byte, the largest first, as many as it takes, then waits for
// their bytes: a client that sent much and stalled costs the API server's
// reviews no wait.
type budget struct {
	mu      sync.Mutex
	free    int64
	cutting int64 // held by bodies cut and not yet given back
	waiting int
	// smallWaiting counts the waiters that may cut (small requests):
	// while any waits, large ones take nothing.
	smallWaiting int
	freed        chan struct{} // closed, and replaced, when bytes are given back to a waiter
	readers      map[*reader]struct{}
	held         prometheus.Gauge   // bytes taken, for the metrics
	cuts         prometheus.Counter // bodies cut
}

// reader is one body being read.
type reader struct {
	held   int64        // taken so far (under budget.mu)
	last   atomic.Int64 // Unix nanoseconds of its last bytes, or of its start
	cut    atomic.Bool  // cut for another's room
	cutNow func()       // ends its read at once
	stop   chan struct{}
	mayCut bool // a small request: it may cut others for room
}

func newBudget(n int64, held prometheus.Gauge, cuts prometheus.Counter) *budget {
	return &budget{free: n, freed: make(chan struct{}), readers: map[*reader]struct{}{}, held: held, cuts: cuts}
}

// reading registers a body being read; cut ends its read at once.
func (b *budget) reading(cut func(), mayCut bool) *reader {
	rd := &reader{cutNow: cut, stop: make(chan struct{}), mayCut: mayCut}
	rd.last.Store(time.Now().UnixNano())
	b.mu.Lock()
	b.readers[rd] = struct{}{}
	b.mu.Unlock()
	return rd
}

// done ends rd's reading: from then on nothing cuts it.
func (b *budget) done(rd *reader) {
	b.mu.Lock()
	delete(b.readers, rd)
	b.mu.Unlock()
}

// take takes n bytes for rd, cutting stalled bodies for room when rd
// may, and waiting within ctx for it. Room that comes back goes to small
// requests first: a large one takes it only when none waits.
func (b *budget) take(ctx context.Context, rd *reader, n int64) error {
	b.mu.Lock()
	for n > b.free || !rd.mayCut && b.smallWaiting > 0 {
		if rd.cut.Load() {
			b.mu.Unlock()
			return errStalled
		}
		var later <-chan time.Time // when the stalest body will have stalled long enough
		stop := func() bool { return false }
		if rd.mayCut && b.free+b.cutting < n {
			v, wait := b.victim(rd)
			if v != nil {
				v.cut.Store(true)
				delete(b.readers, v)
				b.cutting += v.held
				close(v.stop)
				v.cutNow()
				b.cuts.Inc()
				continue
			}
			if wait >= 0 {
				t := time.NewTimer(wait)
				later, stop = t.C, t.Stop
			}
		}
		freed := b.freed
		b.waiting++
		if rd.mayCut {
			b.smallWaiting++
		}
		b.mu.Unlock()
		var err error
		select {
		case <-freed:
		case <-later:
		case <-rd.stop:
		case <-ctx.Done():
			err = fmt.Errorf("%w: %w", errNoRoom, ctx.Err())
		}
		stop()
		b.mu.Lock()
		b.waiting--
		if rd.mayCut {
			b.smallWaiting--
			if b.smallWaiting == 0 {
				b.wake() // the large ones may take what is free now
			}
		}
		if err != nil {
			b.mu.Unlock()
			return err
		}
	}
	b.free -= n
	rd.held += n
	b.held.Add(float64(n))
	b.mu.Unlock()
	return nil
}

// wake wakes every waiter to look again (under mu).
func (b *budget) wake() {
	if b.waiting > 0 {
		close(b.freed)
		b.freed = make(chan struct{})
	}
}

// victim is the body to cut for rd's room: of the others being read that
// hold some of the budget and have gone stalledFor without a byte, the
// one that holds the most, so that one cut is enough most of the time.
// When none has stalled so long, wait is how long until the first will.
func (b *budget) victim(rd *reader) (v *reader, wait time.Duration) {
	now := time.Now().UnixNano()
	wait = -1
	for r := range b.readers {
		if r == rd || r.held == 0 {
			continue
		}
		stalled := time.Duration(now - r.last.Load())
		switch {
		case stalled >= stalledFor:
			if v == nil || r.held > v.held {
				v = r
			}
		case wait < 0 || stalledFor-stalled < wait:
			wait = stalledFor - stalled
		}
	}
	return v, wait
}

// give gives back what rd holds.
func (b *budget) give(rd *reader) {
	b.mu.Lock()
	n := rd.held
	rd.held = 0
	b.free += n
	b.held.Sub(float64(n))
	if rd.cut.Load() {
		b.cutting -= n
	}
	b.wake()
	b.mu.Unlock()
}
