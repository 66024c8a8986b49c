package webhook

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"sync"
)

// certReloader serves the certificate in certFile/keyFile and reloads it
// when either file changes (a renewed Secret, cert-manager's rotation): it
// compares both files' size and modification time on each handshake, which
// follows the symlinks a Secret volume swaps.
type certReloader struct {
	certFile, keyFile string
	log               *slog.Logger

	mu    sync.Mutex
	cert  *tls.Certificate
	stamp string
}

func newCertReloader(certFile, keyFile string, log *slog.Logger) (*certReloader, error) {
	r := &certReloader{certFile: certFile, keyFile: keyFile, log: log}
	if _, err := r.current(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *certReloader) stampNow() (string, error) {
	var stamp string
	for _, f := range []string{r.certFile, r.keyFile} {
		info, err := os.Stat(f)
		if err != nil {
			return "", err
		}
		stamp += fmt.Sprintf("%d/%d ", info.Size(), info.ModTime().UnixNano())
	}
	return stamp, nil
}

// current returns the certificate, reloading it if the files changed. A
// reload that fails keeps the previous certificate and logs why.
func (r *certReloader) current() (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	stamp, err := r.stampNow()
	if err == nil && stamp == r.stamp {
		return r.cert, nil
	}
	var cert tls.Certificate
	if err == nil {
		cert, err = tls.LoadX509KeyPair(r.certFile, r.keyFile)
	}
	if err != nil {
		if r.cert == nil {
			return nil, fmt.Errorf("--tls-cert-file %s / --tls-key-file %s: %w", r.certFile, r.keyFile, err)
		}
		r.log.Error("could not reload the serving certificate; keeping the previous one", "cert", r.certFile, "key", r.keyFile, "err", err)
		return r.cert, nil
	}
	if r.cert != nil {
		r.log.Info("serving certificate reloaded", "cert", r.certFile)
	}
	r.cert, r.stamp = &cert, stamp
	return r.cert, nil
}

// tlsConfig serves the current certificate on every handshake.
func (r *certReloader) tlsConfig() *tls.Config {
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return r.current() },
	}
}
