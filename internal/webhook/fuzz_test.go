package webhook_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/resolve"
	"github.com/job-signal/job-signal/internal/testing/hostileregistry"
	"github.com/job-signal/job-signal/internal/testing/webhooktest"
	"github.com/job-signal/job-signal/internal/webhook"
)

// FuzzMutate sends arbitrary bodies to the /mutate handler: it answers
// 400 or an AdmissionReview for the request's uid (written as json.Marshal
// writes it), never panics, and answers within its time limit. The review allows the Pod with a patch
// that applies to the object, or denies it for now (503, 429 when busy)
// with one short line: the registry lookups fail here (no network), which
// may pass, and a Pod of more than one container is then not admitted
// without job-signal.
func FuzzMutate(f *testing.F) {
	always := corev1.ContainerRestartPolicyAlways
	seeds := []*corev1.Pod{
		jobPod(container("export", "/export"), container("proxy", "/proxy")),
		jobPod(corev1.Container{Name: "job", Image: "127.0.0.1:1/tool:1", Args: []string{"$(X)"}}),
		jobPod(container("a", "/a")),
	}
	seeds[2].Spec.InitContainers = []corev1.Container{{Name: "mesh", Image: "x", RestartPolicy: &always}}
	seeds[2].Annotations = map[string]string{inject.Prefix + "wait-for": "mesh"}
	for _, p := range seeds {
		f.Add(webhooktest.ReviewOf(f, p))
	}
	f.Add([]byte(`{"request":{"uid":"x","kind":{"kind":"Pod","version":"v1"},"operation":"CREATE","object":{"spec":{"containers":null}}}}`))
	f.Add([]byte(`{"request":{"uid":"x","kind":{"kind":"Pod","version":"v1"},"operation":"CREATE","object":[]}}`))
	f.Add([]byte(`{}`))
	// Fuzzed image names may name any host: the registry client gets no
	// network at all, so a lookup fails at once.
	noNetwork := &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no network while fuzzing")
	}}
	cfg := &webhook.Config{Resolver: resolve.New(noNetwork, 16), RegistryTimeout: 200 * time.Millisecond, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	handler := cfg.Handler()
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := httptest.NewRecorder()
		done := make(chan struct{})
		go func() {
			defer close(done)
			handler.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mutate", bytes.NewReader(body)))
		}()
		select {
		case <-done:
		case <-time.After(webhook.RequestTimeout + 2*time.Second):
			buf := make([]byte, 1<<20)
			t.Fatalf("no answer after %s:\n%s", webhook.RequestTimeout+2*time.Second, buf[:runtime.Stack(buf, true)])
		}
		if rec.Code == http.StatusBadRequest {
			return
		}
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		var in, out admissionv1.AdmissionReview
		if err := json.Unmarshal(body, &in); err != nil {
			t.Fatalf("a body that is not a review was answered 200: %v", err)
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Response == nil {
			t.Fatalf("answer %s: %v", rec.Body, err)
		}
		if again, _ := json.Marshal(out); !bytes.Equal(again, rec.Body.Bytes()) {
			t.Fatalf("answer %s, not as json.Marshal writes it: %s", rec.Body, again)
		}
		if out.Response.UID != in.Request.UID {
			t.Fatalf("answer %+v for uid %q", out.Response, in.Request.UID)
		}
		if !out.Response.Allowed {
			r := out.Response.Result
			if r == nil || (r.Code != http.StatusServiceUnavailable && r.Code != http.StatusTooManyRequests) ||
				len(r.Message) > 2048 || strings.ContainsAny(r.Message, "\n\r") || len(in.Request.Object.Raw) == 0 {
				t.Fatalf("a denial that is not for now, or not one short line: %+v", out.Response)
			}
			return
		}
		if out.Response.Patch != nil {
			webhooktest.Apply(t, in.Request.Object.Raw, out.Response)
		}
	})
}

// FuzzHostileRegistry has a registry answer one kind of request (a
// manifest's HEAD or GET, the config blob) with an arbitrary status,
// media type, announced length and body, once or endlessly, and the
// others honestly, for a Pod whose command must be looked up there. The
// webhook answers within its bound with an AdmissionReview for the
// request, every reason one short line; a Pod it allows gets a patch that
// applies and annotations the API server accepts.
func FuzzHostileRegistry(f *testing.F) {
	honestConfig := []byte(`{"architecture":"amd64","os":"linux","config":{"Entrypoint":["/app"]},"rootfs":{"type":"layers","diff_ids":[]}}`)
	f.Add(uint8(0), uint16(200), "application/vnd.oci.image.manifest.v1+json", int64(-1), []byte(nil), false)
	f.Add(uint8(1), uint16(404), "application/json", int64(-1), []byte(`{"errors":[{"code":"MANIFEST_UNKNOWN","message":"no\nsuch"}]}`), true)
	f.Add(uint8(1), uint16(200), "application/vnd.oci.image.index.v1+json", int64(-1), []byte(`{"schemaVersion":2,"manifests":[{"digest":"sha256:00","size":99999999999,"platform":{"os":"linux","architecture":"amd64"}}]}`), false)
	f.Add(uint8(2), uint16(200), "application/octet-stream", int64(1<<40), honestConfig, true)
	f.Add(uint8(2), uint16(500), "text/plain", int64(3), []byte("\x00\xff\n"), true)
	f.Add(uint8(0), uint16(401), "", int64(0), []byte(nil), false)
	reg := hostileregistry.Start(f)
	var mu sync.Mutex
	var answer hostileregistry.Response
	var which uint8
	reg.Script(func(r *http.Request) hostileregistry.Response {
		mu.Lock()
		defer mu.Unlock()
		kind := uint8(2)
		if strings.Contains(r.URL.Path, "/manifests/") {
			kind = 1
			if r.Method == http.MethodHead {
				kind = 0
			}
		}
		if kind != which%3 {
			return hostileregistry.HonestAnswer(r)
		}
		return answer
	})
	cfg := &webhook.Config{RegistryTimeout: 300 * time.Millisecond, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	handler := cfg.Handler()
	pod := jobPod(corev1.Container{Name: "job", Image: reg.ScriptedImage(), Args: []string{"--once"}}, container("proxy", "/proxy"))
	body := webhooktest.ReviewOf(f, pod)
	f.Fuzz(func(t *testing.T, kind uint8, status uint16, mediaType string, announced int64, content []byte, repeat bool) {
		header := http.Header{"Content-Type": {mediaType}, "Docker-Content-Digest": {digestOf(content)}}
		if announced >= 0 {
			header.Set("Content-Length", strconv.FormatInt(announced, 10))
		}
		// The registry may still be writing a body when the webhook has
		// given up on it and the fuzzer is already mutating its input:
		// the registry gets a copy.
		mu.Lock()
		which, answer = kind, hostileregistry.Response{Status: int(status), Header: header, Body: bytes.Clone(content), Repeat: repeat}
		mu.Unlock()
		rec := httptest.NewRecorder()
		start := time.Now()
		handler.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mutate", bytes.NewReader(body)))
		if took := time.Since(start); took > webhook.RequestTimeout+2*time.Second {
			t.Fatalf("answered after %s", took)
		}
		var out admissionv1.AdmissionReview
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Response == nil || out.Response.UID != "uid-1" {
			t.Fatalf("answer %d %.300s: %v", rec.Code, rec.Body, err)
		}
		raw, _ := json.Marshal(pod)
		var after corev1.Pod
		if out.Response.Allowed {
			if err := json.Unmarshal(webhooktest.Apply(t, raw, out.Response), &after); err != nil {
				t.Fatal(err)
			}
		}
		checkReasons(t, out.Response, &after)
	})
}

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
