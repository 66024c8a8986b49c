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
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The bounds on requests. Memory grows with the bodies being handled (the
// body, the Pod decoded, its patch), so their bytes are what is bounded.
const (
	// maxBody bounds an AdmissionReview: the API server accepts request
	// bodies of up to 3 MiB, and etcd stores objects of up to 1.5 MiB.
	maxBody = 4 << 20
	// bodyBudget bounds the bytes of the bodies being handled at once: one
	// of the largest and hundreds of ordinary Pods (a few KiB each) beside
	// it. A Pod takes a few times its size while it is handled.
	bodyBudget = maxBody + 1<<20
	// budgetWait is how long a request waits for its share of bodyBudget
	// before it is answered "busy".
	budgetWait = 2 * time.Second
	// defaultMaxInFlight bounds the requests answered at once, most of
	// them waiting for a registry; more are answered "busy" at once.
	defaultMaxInFlight = 64
	// peekSize is how much of a request that is not read whole is read
	// to find its uid: the API server writes it first.
	peekSize = 4 << 10
)

// RequestTimeout bounds the handling of one request, whatever the
// registry does; the API server's own webhook timeout is 10 s by default.
const RequestTimeout = 8 * time.Second

func (c *Config) serveMutate(w http.ResponseWriter, r *http.Request) {
	c.setup()
	start := time.Now()
	c.Metrics.inFlight.Inc()
	defer c.Metrics.inFlight.Dec()
	if c.inFlight.Add(1) > int64(c.MaxInFlight) {
		c.inFlight.Add(-1)
		c.early(w, peek(r.Body), start, fail(reasonBusy, true, fmt.Errorf("job-signal-webhook is answering %d requests already", c.MaxInFlight)))
		return
	}
	defer c.inFlight.Add(-1)
	if r.ContentLength > maxBody {
		c.early(w, peek(r.Body), start, fail(reasonRequestTooBig, false, fmt.Errorf("the AdmissionReview has %d bytes, over the bound of %d", r.ContentLength, maxBody)))
		return
	}
	weight := r.ContentLength
	if weight <= 0 {
		weight = maxBody // unknown: the most it may be
	}
	wait, cancel := context.WithTimeout(r.Context(), budgetWait)
	err := c.bodies.Acquire(wait, weight)
	cancel()
	if err != nil {
		c.early(w, peek(r.Body), start, fail(reasonBusy, true, fmt.Errorf("job-signal-webhook is answering large requests already")))
		return
	}
	defer c.bodies.Release(weight)
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		c.early(w, body[:min(len(body), peekSize)], start, fail(reasonRequestTooBig, false, fmt.Errorf("the AdmissionReview has more than %d bytes", maxBody)))
		return
	case err != nil:
		http.Error(w, "read AdmissionReview: "+err.Error(), http.StatusBadRequest)
		return
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
		if err == nil {
			err = errors.New("no request")
		}
		c.Log.Warn("not an AdmissionReview", "err", err, "remote", r.RemoteAddr)
		http.Error(w, "want an admission.k8s.io/v1 AdmissionReview with a request: "+oneLine(err.Error(), maxReason), http.StatusBadRequest)
		return
	}
	body = nil // the review holds the object: let the collector have the rest
	ctx, cancelReview := context.WithTimeout(r.Context(), RequestTimeout)
	defer cancelReview()
	resp := c.Review(ctx, review.Request)
	writeReview(w, review.TypeMeta, resp, c.Log)
	c.Log.Debug("reviewed", "uid", review.Request.UID, "elapsed", time.Since(start))
}

// early answers a request that is not handled (busy, too large) from the
// start of its body: an AdmissionReview for its uid, denied or admitted
// as verdict decides for a Pod that may need job-signal; without a uid,
// an HTTP error (the API server applies the failurePolicy).
func (c *Config) early(w http.ResponseWriter, prefix []byte, start time.Time, err error) {
	uid, meta := peekUID(prefix)
	f := failureOf(err)
	log := c.Log.With("uid", uid)
	if uid == "" {
		log.Warn("request refused before reading it", "class", f.class, "reason", f.Error())
		c.Metrics.admitted(denied, f.class, time.Since(start))
		code := http.StatusTooManyRequests
		if f.class == reasonRequestTooBig {
			code = http.StatusRequestEntityTooLarge
		}
		http.Error(w, oneLine(f.Error(), maxReason), code)
		return
	}
	resp, o, class := c.answer(uid, nil, &podOfUnknownShape, f, log)
	c.Metrics.admitted(o, class, time.Since(start))
	writeReview(w, meta, resp, log)
}

// podOfUnknownShape stands for a Pod not read: as the webhook
// configuration sends only Pods of more than one container, it may need
// job-signal.
var podOfUnknownShape = func() (p corev1.Pod) {
	p.Spec.Containers = make([]corev1.Container, 2)
	return p
}()

func writeReview(w http.ResponseWriter, meta metav1.TypeMeta, resp *admissionv1.AdmissionResponse, log *slog.Logger) {
	if meta.APIVersion == "" {
		meta = metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"}
	}
	out, err := json.Marshal(admissionv1.AdmissionReview{TypeMeta: meta, Response: resp})
	if err != nil {
		log.Error("the answer could not be written", "err", err)
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(out)
}

// peek reads the start of a body that will not be read whole.
func peek(body io.Reader) []byte {
	b, _ := io.ReadAll(io.LimitReader(body, peekSize))
	return b
}

// peekUID finds request.uid (and the review's apiVersion and kind) in the
// start of an AdmissionReview, which may be cut anywhere.
func peekUID(prefix []byte) (types.UID, metav1.TypeMeta) {
	var meta metav1.TypeMeta
	var uid string
	dec := json.NewDecoder(bytes.NewReader(prefix))
	eachKey(dec, func(key string) bool {
		switch key {
		case "apiVersion":
			return dec.Decode(&meta.APIVersion) == nil
		case "kind":
			return dec.Decode(&meta.Kind) == nil
		case "request":
			eachKey(dec, func(key string) bool {
				if key == "uid" {
					dec.Decode(&uid)
					return false
				}
				return skipValue(dec)
			})
			return false
		}
		return skipValue(dec)
	})
	return types.UID(uid), meta
}

// eachKey calls f with each key of the object dec is at, until f says
// to stop (after it has read the key's value, or not) or the input ends.
func eachKey(dec *json.Decoder, f func(key string) bool) {
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return
		}
		if k, _ := key.(string); !f(k) {
			return
		}
	}
}

func skipValue(dec *json.Decoder) bool {
	var v json.RawMessage
	return dec.Decode(&v) == nil
}
