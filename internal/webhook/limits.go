package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The bounds on requests. Memory grows with the bodies being handled (the
// body, the Pod decoded, its patch), so their bytes are what is bounded,
// as they arrive: a client costs what it sent, never what it declared.
const (
	// maxBody bounds an AdmissionReview: the API server accepts request
	// bodies of up to 3 MiB, and etcd stores objects of up to 1.5 MiB.
	maxBody = 4 << 20
	// bodyBudget bounds the bytes of the bodies being handled at once: one
	// of the largest and hundreds of ordinary Pods (a few KiB each) beside
	// it. A Pod takes a few times its size while it is handled.
	bodyBudget = maxBody + 1<<20
	// firstRead is a body's first buffer, before any of it has come: the
	// most a request holds of bodyBudget ahead of its bytes.
	firstRead = 512
	// defaultMaxInFlight bounds the requests answered at once, most of
	// them waiting for a registry; more are answered "busy" at once.
	defaultMaxInFlight = 64
)

// The bounds on a connection's time, each from what came before: a
// client that is slow, or lies, loses its own request when one passes.
const (
	// HeaderTimeout bounds the TLS handshake of a new connection, and then
	// each request's headers. It is the API server's own bound on a
	// handshake (client-go's transport): a webhook starved of CPU must not
	// cut one the API server still waits for, and the connections in their
	// handshake are bounded by number too (maxWaitingConns).
	HeaderTimeout = 10 * time.Second
	// BodyTimeout bounds the whole body of an AdmissionReview, from its
	// headers. The API server writes a review at once, headers and body,
	// so the body follows them within a round trip whatever its size (a
	// few KiB, at most 3 MiB); a client still sending after this is not
	// an API server, or is one on a network that would not answer within
	// its webhook timeout either.
	BodyTimeout = 2 * time.Second
)

// RequestTimeout bounds the handling of one request, from its headers,
// whatever the registry does; the API server's own webhook timeout is 10
// s by default.
const RequestTimeout = 8 * time.Second

func (c *Config) serveMutate(w http.ResponseWriter, r *http.Request) {
	c.setup()
	start := time.Now()
	c.Metrics.inFlight.Inc()
	defer c.Metrics.inFlight.Dec()
	// The body within BodyTimeout, on the connection itself, so that a
	// client that stops sending is cut there, not when the server's
	// ReadTimeout passes. A ResponseWriter without deadlines (a test's
	// recorder) is bounded by ctx alone.
	rc := http.NewResponseController(w)
	deadline := start.Add(BodyTimeout)
	rc.SetReadDeadline(deadline)
	stream := http.MaxBytesReader(w, r.Body, maxBody)
	if r.ContentLength > maxBody {
		c.early(w, stream, start, fail(reasonRequestTooBig, fmt.Errorf("the AdmissionReview has %d bytes, over the bound of %d", r.ContentLength, maxBody)))
		return
	}
	ctx, cancel := context.WithDeadline(r.Context(), deadline)
	body, release, err := c.readBody(ctx, stream, r.ContentLength, func() { rc.SetReadDeadline(time.Now()) })
	cancel()
	defer release()
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		err = fail(reasonRequestTooBig, fmt.Errorf("the AdmissionReview has more than %d bytes", maxBody))
	case errors.Is(err, errNoRoom):
		err = fail(reasonBusy, fmt.Errorf("job-signal-webhook is answering large requests already"))
	case errors.Is(err, os.ErrDeadlineExceeded):
		w.Header().Set("Connection", "close")
		err = fail(reasonSlowRequest, fmt.Errorf("the AdmissionReview did not arrive whole within %s (%d bytes of %d)", BodyTimeout, len(body), r.ContentLength))
	case errors.Is(err, errStalled):
		w.Header().Set("Connection", "close")
		err = fail(reasonSlowRequest, fmt.Errorf("the AdmissionReview stopped coming (%d bytes of %d) while other requests needed its room", len(body), r.ContentLength))
	case err != nil:
		http.Error(w, "read AdmissionReview: "+err.Error(), http.StatusBadRequest)
		return
	}
	if err != nil { // refused, from a sketch of what came
		c.early(w, bytes.NewReader(body), start, err)
		return
	}
	// Read whole: from here RequestTimeout bounds the request, and the
	// connection's deadline must not end it (the server's read of what
	// follows the body would cancel its context).
	rc.SetReadDeadline(time.Time{})
	read := time.Since(start)
	c.Metrics.bodyTime.Observe(read.Seconds())
	if c.inFlight.Add(1) > int64(c.MaxInFlight) {
		c.inFlight.Add(-1)
		c.early(w, bytes.NewReader(body), start, fail(reasonBusy, fmt.Errorf("job-signal-webhook is answering as many requests as it may at once (%d)", c.MaxInFlight)))
		return
	}
	defer c.inFlight.Add(-1)
	review, err := decodeReview(body)
	if err != nil || review.Request == nil {
		if err == nil {
			err = errors.New("no request")
		}
		c.Log.Warn("not an AdmissionReview", "err", err, "remote", r.RemoteAddr)
		http.Error(w, "want an admission.k8s.io/v1 AdmissionReview with a request: "+oneLine(err.Error(), maxReason), http.StatusBadRequest)
		return
	}
	ctx, cancelReview := context.WithDeadline(r.Context(), start.Add(RequestTimeout))
	defer cancelReview()
	resp := c.reviewDecoded(ctx, review.Request, review.pod)
	writeReview(w, review.TypeMeta, resp, c.Log)
	c.Log.Debug("reviewed", "uid", string(review.Request.UID), "elapsed", time.Since(start), "read", read)
}

// early answers a request that is not handled (busy, too large) from a
// sketch of its body, read as a stream through body (bounded by the
// caller) without holding it. A Pod the webhook does not serve, or that
// cannot need job-signal, is admitted unchanged; one it serves is denied
// or admitted without job-signal as verdict decides. Without a uid, or
// when a failure that may pass comes before the webhook could read the
// Pod, it answers an HTTP error and the API server applies the
// registration's failurePolicy: the webhook itself denies no Pod it has
// not read.
func (c *Config) early(w http.ResponseWriter, body io.Reader, start time.Time, err error) {
	sk := sketchOf(body)
	f := failureOf(err)
	log := c.Log.With("uid", string(sk.uid))
	pod, class, known := served(sk)
	if sk.uid == "" || !known && f.temporary() {
		log.Warn("request refused before reading its Pod", "class", string(f.class), "reason", f.Error())
		c.Metrics.admitted(denied, f.class, time.Since(start))
		code := http.StatusTooManyRequests
		switch f.class {
		case reasonRequestTooBig:
			code = http.StatusRequestEntityTooLarge
		case reasonSlowRequest:
			code = http.StatusRequestTimeout
		}
		http.Error(w, oneLine(f.Error(), maxReason), code)
		return
	}
	if known && pod == nil {
		log.Debug("not injected", "class", string(class), "while", string(f.class))
		c.Metrics.admitted(unchanged, class, time.Since(start))
		writeReview(w, sk.meta, &admissionv1.AdmissionResponse{UID: sk.uid, Allowed: true}, log)
		return
	}
	resp, o, class := c.answer(sk.uid, nil, pod, f, log)
	c.Metrics.admitted(o, class, time.Since(start))
	writeReview(w, sk.meta, resp, log)
}

// served decides from a sketch whether the request is for a Pod the
// webhook serves and that may need job-signal (the rule of Decide and
// needsJobSignal). It returns that Pod as far as it is known (of unknown
// shape: two containers), or the class of why not; known is false when
// the Pod was not read far enough to tell.
func served(sk sketch) (pod *corev1.Pod, class string, known bool) {
	if sk.kind != "" && (sk.kind != "Pod" || sk.group != "") || sk.operation != "" && sk.operation != string(admissionv1.Create) {
		return nil, reasonNotPod, true
	}
	if !sk.metadata {
		return nil, "", false
	}
	if ok, class, _ := Decide(&sk.pod); !ok {
		return nil, class, true
	}
	p := sk.pod
	if !sk.spec {
		p.Spec.Containers = make([]corev1.Container, 2) // may need it
	} else if !needsJobSignal(&p) {
		return nil, reasonNothingToDo, true
	}
	return &p, "", true
}

func writeReview(w http.ResponseWriter, meta metav1.TypeMeta, resp *admissionv1.AdmissionResponse, log *slog.Logger) {
	if meta.APIVersion == "" {
		meta = metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}
	}
	out, ok := appendReview(nil, meta, resp)
	var err error
	if !ok {
		out, err = json.Marshal(admissionv1.AdmissionReview{TypeMeta: meta, Response: resp})
	}
	if err != nil {
		log.Error("the answer could not be written", "err", err)
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	// With its length, the answer goes in one piece: without, one over 2
	// KiB (most patches) would be sent in chunks.
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	w.Write(out)
}
