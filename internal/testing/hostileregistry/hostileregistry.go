// Package hostileregistry is a container registry that misbehaves on
// purpose, for tests of every client that reads from registries: a small
// real HTTP server on 127.0.0.1 speaking enough of the OCI distribution
// API (a ping, manifests by tag and digest, blobs) to be looked up, where
// each repository plays one trick: endless bodies, sizes and digests that
// lie, a slow drip, error text of a megabyte. It counts the body bytes it
// wrote for each trick, so a test can show that the client stopped
// reading, not only that it failed.
package hostileregistry

import (
	"bytes"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A Trick is how one repository misbehaves.
type Trick string

// The tricks; each is served as the repository "trick/NAME", tag "1".
const (
	// Honest serves a small valid image: the control.
	Honest Trick = "honest"
	// EndlessManifest answers the manifest with 200 and a body that never
	// ends, without a Content-Length.
	EndlessManifest Trick = "endless-manifest"
	// EndlessError resolves its tag, then answers the manifest's GET with
	// 404 and an error body that never ends.
	EndlessError Trick = "endless-error"
	// HugeErrorText resolves its tag, then answers the manifest's GET
	// with 404 and a megabyte of error text that is not the registry API's
	// JSON (a proxy's error page), over many lines.
	HugeErrorText Trick = "huge-error-text"
	// HugeConfig serves a manifest announcing an 8 GiB config, and serves
	// that config, endlessly, when asked.
	HugeConfig Trick = "huge-config"
	// LongConfig announces a small config and serves an endless one,
	// without a Content-Length.
	LongConfig Trick = "long-config"
	// WrongManifestDigest serves, for the digest asked, a manifest that
	// does not hash to it.
	WrongManifestDigest Trick = "wrong-manifest-digest"
	// WrongConfigDigest serves a config blob that does not hash to its
	// digest.
	WrongConfigDigest Trick = "wrong-config-digest"
	// SlowDrip sends the manifest's headers, then one byte every 50 ms.
	SlowDrip Trick = "slow-drip"
	// HugeIndexChild serves an index whose linux/amd64 image announces a
	// manifest of 1 GiB, served endlessly.
	HugeIndexChild Trick = "huge-index-child"
	// Unavailable answers 503, as a registry being restarted.
	Unavailable Trick = "unavailable"
)

// Tricks lists every trick but Honest.
var Tricks = []Trick{EndlessManifest, EndlessError, HugeErrorText, HugeConfig, LongConfig,
	WrongManifestDigest, WrongConfigDigest, SlowDrip, HugeIndexChild, Unavailable}

// Response is one scripted answer (see Registry.Script).
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	// Repeat sends Body again and again until the client goes away.
	Repeat bool
}

// Registry is a running hostile registry.
type Registry struct {
	Host string // 127.0.0.1:PORT, plain HTTP (clients use it for loopback hosts)

	srv     *http.Server
	done    chan struct{} // closed when the server has stopped
	serving atomic.Int64  // answers being written
	mu      sync.Mutex
	sent    map[Trick]*atomic.Int64
	script  func(r *http.Request) Response
}

// Start serves every trick until the test ends.
func Start(t testing.TB) *Registry {
	t.Helper()
	r, err := Serve()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// Serve serves every trick until Close (for programs that are not
// tests: the benchmarks).
func Serve() (*Registry, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &Registry{Host: l.Addr().String(), sent: map[Trick]*atomic.Int64{}, done: make(chan struct{})}
	for _, trick := range append([]Trick{Honest, "scripted"}, Tricks...) {
		r.sent[trick] = &atomic.Int64{}
	}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(r.done)
		r.srv.Serve(l)
	}()
	return r, nil
}

// Close stops the registry; endless answers end, their writes failing.
func (r *Registry) Close() {
	r.srv.Close()
	<-r.done
}

// Image is the reference of the image that plays trick.
func (r *Registry) Image(trick Trick) string {
	return r.Host + "/trick/" + string(trick) + ":1"
}

// Sent is how many body bytes the registry wrote for trick so far.
func (r *Registry) Sent(trick Trick) int64 { return r.sent[trick].Load() }

// Script makes the repository "trick/scripted" answer every request with
// what answer returns (nil: 404).
func (r *Registry) Script(answer func(*http.Request) Response) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.script = answer
}

// HonestAnswer is the answer of an honest registry to req, for a script to
// give where it plays no trick: the image of Honest.
func HonestAnswer(req *http.Request) Response {
	rec := &recorder{header: http.Header{}}
	_, rest, _ := strings.Cut(strings.TrimPrefix(req.URL.Path, "/v2/trick/"), "/")
	kind, ref, _ := strings.Cut(rest, "/")
	playTrick(rec, req, Honest, kind, ref)
	return Response{Status: rec.status, Header: rec.header, Body: rec.body.Bytes()}
}

// recorder keeps an answer (httptest's is for tests, not their tools).
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(b)
}

// ScriptedImage is the reference of the scripted repository.
func (r *Registry) ScriptedImage() string { return r.Host + "/trick/scripted:1" }

// Idle waits until no answer is being written (a client that stopped
// reading an endless body has hung up), at most d; false if some still
// is. Sent is final then.
func (r *Registry) Idle(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for r.serving.Load() > 0 {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond) // a counter has no event to wait on: poll, bounded
	}
	return true
}

func (r *Registry) serve(w http.ResponseWriter, req *http.Request) {
	r.serving.Add(1)
	defer r.serving.Add(-1)
	if req.URL.Path == "/v2/" {
		w.WriteHeader(http.StatusOK)
		return
	}
	rest, ok := strings.CutPrefix(req.URL.Path, "/v2/trick/")
	name, rest, ok2 := strings.Cut(rest, "/")
	counter := r.sent[Trick(name)]
	if !ok || !ok2 || counter == nil {
		http.NotFound(w, req)
		return
	}
	out := &countingWriter{w: w, n: counter}
	if name == "scripted" {
		r.mu.Lock()
		answer := r.script
		r.mu.Unlock()
		if answer == nil {
			http.NotFound(w, req)
			return
		}
		resp := answer(req)
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(cmpStatus(resp.Status))
		if req.Method != http.MethodHead {
			writeBody(out, resp.Body, resp.Repeat, 0)
		}
		return
	}
	kind, ref, _ := strings.Cut(rest, "/")
	playTrick(out, req, Trick(name), kind, ref)
}

// cmpStatus is status, or 200 when it is not one an HTTP server can send.
func cmpStatus(status int) int {
	if status < 100 || status > 999 {
		return http.StatusOK
	}
	return status
}

// countingWriter counts the body bytes written.
type countingWriter struct {
	w http.ResponseWriter
	n *atomic.Int64
}

func (c *countingWriter) Header() http.Header  { return c.w.Header() }
func (c *countingWriter) WriteHeader(code int) { c.w.WriteHeader(code) }
func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n.Add(int64(n))
	return n, err
}

// writeBody writes body once, or until the client leaves when repeat;
// with drip, one byte at a time, drip apart.
func writeBody(w http.ResponseWriter, body []byte, repeat bool, drip time.Duration) {
	flusher, _ := w.(interface{ Flush() })
	if f, ok := w.(*countingWriter); ok {
		flusher, _ = f.w.(http.Flusher)
	}
	for {
		if drip > 0 {
			for i := range body {
				if _, err := w.Write(body[i : i+1]); err != nil {
					return
				}
				if flusher != nil {
					flusher.Flush()
				}
				time.Sleep(drip) // the trick is to be slow: a pace, not a synchronisation
			}
		} else if _, err := w.Write(body); err != nil {
			return
		}
		if !repeat || len(body) == 0 {
			return
		}
	}
}
