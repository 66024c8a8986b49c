package resolve

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"golang.org/x/sync/semaphore"
)

// The bounds on what one answer of a registry may hold. A registry that
// breaks one fails the lookup of that image, never the process.
const (
	// MaxManifest bounds a manifest or an index: distribution, the
	// reference registry, refuses to store larger ones.
	MaxManifest = 4 << 20
	// MaxConfig bounds an image's config blob, kilobytes in practice
	// (tens of kilobytes with a long history).
	MaxConfig = 4 << 20
	// MaxErrorBody is how much of an error answer is read: enough for
	// the registry's error codes and message, which are cut there.
	MaxErrorBody = 4 << 10
	// maxOther bounds the rest: the API version check, token answers.
	maxOther = 256 << 10
	// readBudget bounds the registry bytes held by all lookups at once.
	// An answer of announced size takes its size before it is read,
	// waiting (within its lookup's deadline) while others hold the budget;
	// one without takes it as it comes, and fails rather than wait, so
	// that no answer holds part of the budget while waiting for more.
	// At least every single bound: any answer within its bound can be
	// read. Honest answers are kilobytes; this is what hostile ones hold.
	readBudget = 4 << 20
)

// BoundError is an answer of a registry over one of the bounds.
type BoundError struct {
	What      string // "manifest", "config blob", ...
	Limit     int64
	Announced int64 // the size the registry announced, when it did
}

func (e *BoundError) Error() string {
	if e.Announced > 0 {
		return fmt.Sprintf("the registry announced a %s of %d bytes, over the bound of %s", e.What, e.Announced, size(e.Limit))
	}
	return fmt.Sprintf("the registry sent more than %s for a %s", size(e.Limit), e.What)
}

func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// boundedTransport bounds every answer's body by what the request asked
// for, refuses announced sizes over the bound before reading anything,
// cuts error answers short, and takes the bytes it lets through from a
// budget shared by every lookup of one Resolver.
type boundedTransport struct {
	next   http.RoundTripper
	budget *semaphore.Weighted
}

func (t *boundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.Body == nil || req.Method == http.MethodHead {
		return resp, err
	}
	what, limit := boundFor(req.URL.Path)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// The error text is for a message: its start is enough.
		resp.Body = &boundedBody{body: resp.Body, left: MaxErrorBody, cut: true}
		if resp.ContentLength > MaxErrorBody {
			resp.ContentLength = -1
		}
		return resp, nil
	}
	if resp.ContentLength > limit {
		resp.Body.Close()
		return nil, &BoundError{What: what, Limit: limit, Announced: resp.ContentLength}
	}
	body := &boundedBody{body: resp.Body, left: limit, what: what, limit: limit, budget: t.budget}
	if resp.ContentLength >= 0 {
		// The client stops at the announced length: take it now.
		if err := t.budget.Acquire(req.Context(), resp.ContentLength); err != nil {
			resp.Body.Close()
			return nil, fmt.Errorf("waiting for other registry reads to finish: %w", err)
		}
		body.taken, body.prepaid = resp.ContentLength, true
	}
	resp.Body = body
	return resp, nil
}

// ErrBusy is a read refused because other lookups hold the read budget.
var ErrBusy = errors.New("other registry reads hold the memory budget of lookups")

// boundFor names what a registry path holds and its bound.
func boundFor(path string) (string, int64) {
	switch {
	case strings.Contains(path, "/manifests/"):
		return "manifest", MaxManifest
	case strings.Contains(path, "/blobs/"):
		return "config blob", MaxConfig // the only blobs looked up are configs
	}
	return "registry answer", maxOther
}

// boundedBody reads at most left bytes: then EOF when cut, else a
// BoundError. What it lets through is taken from budget until Close
// (prepaid: taken already).
type boundedBody struct {
	body    io.ReadCloser
	left    int64
	cut     bool
	what    string
	limit   int64
	budget  *semaphore.Weighted
	prepaid bool

	mu    sync.Mutex
	taken int64
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		if b.cut {
			return 0, io.EOF
		}
		// One byte more says whether the body really goes on.
		var one [1]byte
		if n, _ := io.ReadFull(b.body, one[:]); n == 0 {
			return 0, io.EOF
		}
		return 0, &BoundError{What: b.what, Limit: b.limit}
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.body.Read(p)
	b.left -= int64(n)
	if n > 0 && b.budget != nil && !b.prepaid {
		if !b.budget.TryAcquire(int64(n)) {
			return n, fmt.Errorf("reading a %s of unannounced size: %w", b.what, ErrBusy)
		}
		b.mu.Lock()
		b.taken += int64(n)
		b.mu.Unlock()
	}
	if b.left <= 0 && b.cut && err == nil {
		err = io.EOF
	}
	return n, err
}

func (b *boundedBody) Close() error {
	b.mu.Lock()
	taken := b.taken
	b.taken = 0
	b.mu.Unlock()
	if taken > 0 {
		b.budget.Release(taken)
	}
	return b.body.Close()
}
