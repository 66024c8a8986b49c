package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
)

// maxBody bounds an AdmissionReview: the API server sends objects of up to
// 3 MiB, wrapped once.
const maxBody = 8 << 20

// RequestTimeout bounds the handling of one request, whatever the
// registry does; the API server's own webhook timeout is 10 s by default.
const RequestTimeout = 8 * time.Second

// Handler serves /mutate and /healthz.
func (c *Config) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /mutate", c.serveMutate)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "ok\n")
	})
	return mux
}

func (c *Config) serveMutate(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		http.Error(w, "read AdmissionReview: "+err.Error(), http.StatusBadRequest)
		return
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
		if err == nil {
			err = errors.New("no request")
		}
		c.Log.Warn("not an AdmissionReview", "err", err, "remote", r.RemoteAddr)
		http.Error(w, "want an admission.k8s.io/v1 AdmissionReview with a request: "+err.Error(), http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), RequestTimeout)
	defer cancel()
	resp := c.Review(ctx, review.Request)
	out, err := json.Marshal(admissionv1.AdmissionReview{TypeMeta: review.TypeMeta, Response: resp})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if review.APIVersion == "" {
		// Answer in the version the API server speaks to us.
		out, _ = json.Marshal(admissionv1.AdmissionReview{Response: resp})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(out)
	c.Log.Debug("reviewed", "uid", review.Request.UID, "elapsed", time.Since(start))
}

// Server is the webhook's HTTPS server.
type Server struct {
	srv      *http.Server
	listener net.Listener
}

// Listen binds addr and loads the certificate, so that errors come before
// serving; Serve then serves until Shutdown.
func Listen(addr, certFile, keyFile string, cfg *Config, log *slog.Logger) (*Server, error) {
	certs, err := newCertReloader(certFile, keyFile, log)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--listen %s: %w", addr, err)
	}
	srv := &http.Server{
		Handler:           cfg.Handler(),
		TLSConfig:         certs.tlsConfig(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      RequestTimeout + 2*time.Second,
		IdleTimeout:       90 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	return &Server{srv: srv, listener: l}, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.listener.Addr().String() }

// Serve serves HTTPS until Shutdown.
func (s *Server) Serve() error {
	err := s.srv.ServeTLS(s.listener, "", "")
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops accepting and waits for requests under way, within ctx.
func (s *Server) Shutdown(ctx context.Context) error { return s.srv.Shutdown(ctx) }
