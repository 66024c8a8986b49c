package webhook

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// TestBudgetVictim: of the other bodies being read that hold some of the
// budget, the largest of those that have gone stalledFor without a byte
// is cut; when none has, the wait is until the first will.
func TestBudgetVictim(t *testing.T) {
	now := time.Now()
	body := func(held int64, stalled time.Duration) *reader {
		r := &reader{held: held}
		r.last.Store(now.Add(-stalled).UnixNano())
		return r
	}
	self := body(512, time.Hour)
	for _, tc := range []struct {
		name    string
		readers []*reader
		want    int // index of the victim, -1 for none
		wait    bool
	}{
		{"none but itself", nil, -1, false},
		{"the largest of the stalled", []*reader{body(1<<20, time.Second), body(2<<20, 300*time.Millisecond), body(4<<20, 10*time.Millisecond)}, 1, true},
		{"none stalled long enough", []*reader{body(1<<20, 100*time.Millisecond), body(2<<20, 10*time.Millisecond)}, -1, true},
		{"holding nothing", []*reader{body(0, time.Hour)}, -1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBudget(bodyBudget, prometheus.NewGauge(prometheus.GaugeOpts{Name: "x"}), prometheus.NewCounter(prometheus.CounterOpts{Name: "y"}))
			b.readers[self] = struct{}{}
			for _, r := range tc.readers {
				b.readers[r] = struct{}{}
			}
			v, wait := b.victim(self)
			switch {
			case tc.want < 0 && v != nil, tc.want >= 0 && v != tc.readers[tc.want]:
				t.Errorf("victim %+v, want index %d", v, tc.want)
			case tc.want < 0 && tc.wait && (wait < 0 || wait > stalledFor-90*time.Millisecond):
				t.Errorf("wait %s, want until the stalest has stalled %s", wait, stalledFor)
			case !tc.wait && wait >= 0:
				t.Errorf("wait %s, want none", wait)
			}
		})
	}
}

// TestBudgetTake: a share that fits is taken at once while a larger one
// waits; a small request cuts a stalled body for its room, and the body
// cut takes no more; room given back goes to the small waiter before the
// large one.
func TestBudgetTake(t *testing.T) {
	b := newBudget(1000, prometheus.NewGauge(prometheus.GaugeOpts{Name: "x"}), prometheus.NewCounter(prometheus.CounterOpts{Name: "y"}))
	ctx := context.Background()
	cut := make(chan struct{}, 1)
	stalled := b.reading(func() { cut <- struct{}{} }, false)
	if err := b.take(ctx, stalled, 900); err != nil {
		t.Fatal(err)
	}
	large := b.reading(func() {}, false)
	largeDone := make(chan error, 1)
	go func() { largeDone <- b.take(ctx, large, 800) }()
	small := b.reading(func() {}, true)
	if err := b.take(ctx, small, 100); err != nil { // fits beside the large one waiting
		t.Fatal(err)
	}
	stalled.last.Store(time.Now().Add(-time.Hour).UnixNano())
	smallDone := make(chan error, 1)
	go func() { smallDone <- b.take(ctx, small, 500) }()
	select {
	case <-cut:
	case <-time.After(10 * time.Second):
		t.Fatal("the stalled body was not cut")
	}
	if err := b.take(ctx, stalled, 1); !errors.Is(err, errStalled) {
		t.Errorf("the body cut takes more: %v", err)
	}
	b.give(stalled) // its handler answers, and gives its room back
	if err := <-smallDone; err != nil {
		t.Fatalf("the small one: %v", err)
	}
	select {
	case err := <-largeDone:
		t.Fatalf("the large one took room it does not fit in: %v", err)
	default:
	}
	b.give(small)
	if err := <-largeDone; err != nil {
		t.Fatalf("the large one: %v", err)
	}
	if b.free != 200 || b.cutting != 0 {
		t.Errorf("free %d, cutting %d", b.free, b.cutting)
	}
}
