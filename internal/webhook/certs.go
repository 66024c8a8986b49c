package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Serving is the certificate the HTTPS listener presents. One loop owns
// it and sets it: the files' (watchFiles, for --tls-cert-file: cert-manager's
// or your own Secret, mounted) or the managed Secret's (ManageCertificate).
// Every handshake reads it; whatever its source, its owner shows its
// expiry (a metric) and warns when it is near (watchExpiry).
type Serving struct {
	cert  atomic.Pointer[tls.Certificate]
	ready chan struct{} // closed when the first certificate is set
	once  sync.Once
	// The owner's (watchExpiry): the certificate last warned about, and when.
	warnedSerial string
	warnedAt     time.Time
}

// NewServing is a Serving with no certificate yet.
func NewServing() *Serving { return &Serving{ready: make(chan struct{})} }

// set serves c from the next handshake on; only the owner calls it.
func (s *Serving) set(c *tls.Certificate) {
	s.cert.Store(c)
	s.once.Do(func() { close(s.ready) })
}

// Certificate is the certificate served now.
func (s *Serving) Certificate() (*tls.Certificate, error) {
	if c := s.cert.Load(); c != nil {
		return c, nil
	}
	return nil, errors.New("no serving certificate yet")
}

// Ready is closed once a certificate is served.
func (s *Serving) Ready() <-chan struct{} { return s.ready }

// stampOf is the size and modification time of files: it changes when
// any of them is rewritten, or replaced through the symlinks a Secret
// volume swaps.
func stampOf(files ...string) (string, error) {
	var stamp string
	for _, f := range files {
		info, err := os.Stat(f)
		if err != nil {
			return "", err
		}
		stamp += fmt.Sprintf("%d/%d ", info.Size(), info.ModTime().UnixNano())
	}
	return stamp, nil
}

// reloaded is a value read from files, read again on use when their stamp
// changed (a renewed Secret, cert-manager's rotation). A reload that fails
// keeps the previous value and logs why.
type reloaded[T any] struct {
	files []string
	load  func() (T, error)
	what  string // for the log
	log   *slog.Logger

	mu    sync.Mutex
	value T
	ok    bool
	stamp string
}

func (r *reloaded[T]) current() (T, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	stamp, err := stampOf(r.files...)
	if err == nil && r.ok && stamp == r.stamp {
		return r.value, nil
	}
	var v T
	if err == nil {
		v, err = r.load()
	}
	if err != nil {
		if !r.ok {
			return v, err
		}
		r.log.Error("could not reload the "+r.what+"; keeping the previous one", "files", r.files, "err", err)
		return r.value, nil
	}
	if r.ok {
		r.log.Info(r.what+" reloaded", "files", r.files)
	}
	r.value, r.ok, r.stamp = v, true, stamp
	return v, nil
}

// filePoll is how often watchFiles looks at the certificate's files: a
// Secret volume is updated by the kubelet within a minute or so, and two
// stat calls a second cost nothing.
const filePoll = time.Second

// certificateFiles is the serving certificate read from --tls-cert-file
// and --tls-key-file: loaded once before serving, then by watchFiles.
type certificateFiles struct {
	serving *Serving
	file    *reloaded[*tls.Certificate]
	cfg     *Config
}

func loadCertificateFiles(certFile, keyFile string, cfg *Config) (*certificateFiles, error) {
	f := &certificateFiles{serving: NewServing(), cfg: cfg, file: &reloaded[*tls.Certificate]{
		files: []string{certFile, keyFile}, what: "serving certificate", log: cfg.Log,
		load: func() (*tls.Certificate, error) {
			cert, err := tls.LoadX509KeyPair(certFile, keyFile)
			return &cert, err
		}}}
	cert, err := f.file.current()
	if err != nil {
		return nil, fmt.Errorf("--tls-cert-file %s / --tls-key-file %s: %w", certFile, keyFile, err)
	}
	f.serving.set(cert)
	f.cfg.watchExpiry(f.serving, "files", time.Now())
	return f, nil
}

// watchFiles is the loop that owns the certificate read from files: it
// reads them again when they change, serves what they hold and watches
// its expiry, until ctx ends.
func (f *certificateFiles) watchFiles(ctx context.Context) {
	tick := time.NewTicker(filePoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if cert, err := f.file.current(); err == nil {
			f.serving.set(cert)
		}
		f.cfg.watchExpiry(f.serving, "files", time.Now())
	}
}

// serverTLS is the HTTPS listener's TLS: the serving certificate and, when
// clientCAFile is set, the CAs a client certificate must be signed by,
// reloaded when their file changes.
type serverTLS struct {
	serving *Serving
	cas     *reloaded[*x509.CertPool] // nil: no client certificates asked for
}

func newServerTLS(serving *Serving, clientCAFile string, log *slog.Logger) (*serverTLS, error) {
	s := &serverTLS{serving: serving}
	if clientCAFile == "" {
		return s, nil
	}
	s.cas = &reloaded[*x509.CertPool]{files: []string{clientCAFile}, what: "client CA", log: log,
		load: func() (*x509.CertPool, error) {
			pem, err := os.ReadFile(clientCAFile)
			if err != nil {
				return nil, err
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("no PEM certificate in it")
			}
			return pool, nil
		}}
	if _, err := s.cas.current(); err != nil {
		return nil, fmt.Errorf("--client-ca-file %s: %w", clientCAFile, err)
	}
	return s, nil
}

// config serves the current certificate on every handshake. With client
// CAs, a client certificate is asked for and, when given, must be signed
// by one of them (else the handshake fails); requireClient then refuses
// requests without one, but for /healthz, so that the kubelet's probes,
// which present none, still work.
func (s *serverTLS) config() *tls.Config {
	c := &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return s.serving.Certificate() },
	}
	if s.cas != nil {
		base := c.Clone()
		c.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
			pool, err := s.cas.current()
			if err != nil {
				return nil, err
			}
			per := base.Clone()
			per.ClientAuth, per.ClientCAs = tls.VerifyClientCertIfGiven, pool
			return per, nil
		}
	}
	return c
}

// requireClient refuses, with 403, every request but GET /healthz that
// came without a verified client certificate, when client CAs are set.
func (s *serverTLS) requireClient(next http.Handler, log *slog.Logger) http.Handler {
	if s.cas == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" && (r.TLS == nil || len(r.TLS.VerifiedChains) == 0) {
			log.Warn("refused a request without a client certificate (--client-ca-file)", "remote", r.RemoteAddr, "path", r.URL.Path)
			http.Error(w, "a client certificate signed by a CA of --client-ca-file is required", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}
