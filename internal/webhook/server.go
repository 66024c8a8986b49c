package webhook

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Handler serves /mutate, /healthz and /metrics: the HTTPS listener's,
// where only the API server is meant to reach it.
func (c *Config) Handler() http.Handler {
	mux := c.observeMux()
	mux.HandleFunc("POST /mutate", c.serveMutate)
	return mux
}

// MetricsHandler serves /metrics and /healthz only: the plain-HTTP
// listener's, which the Service exposes in the cluster, where anyone may
// reach it. An admission request there would let any Pod have the webhook
// read another namespace's pull secrets for it.
func (c *Config) MetricsHandler() http.Handler { return c.observeMux() }

func (c *Config) observeMux() *http.ServeMux {
	c.setup()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "ok\n")
	})
	mux.Handle("GET /metrics", c.Metrics.Handler())
	return mux
}

// Server is one of the webhook's listeners: HTTPS for the API server, or
// plain HTTP for metrics.
type Server struct {
	srv      *http.Server
	listener net.Listener
	tls      bool
	// stop ends the loop that owns the serving certificate, when the
	// server runs it (the files'); ended is closed once it has.
	stop  context.CancelFunc
	ended chan struct{}
}

// Listen binds addr and loads the certificate from certFile and keyFile
// (and cfg.ClientCAFile's CAs), so that errors come before serving; Serve
// then serves until Shutdown; meanwhile the files are read again when
// they change.
func Listen(addr, certFile, keyFile string, cfg *Config, log *slog.Logger) (*Server, error) {
	cfg.setup()
	files, err := loadCertificateFiles(certFile, keyFile, cfg)
	if err != nil {
		return nil, err
	}
	s, err := ListenServing(addr, files.serving, cfg, log)
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	s.stop, s.ended = stop, make(chan struct{})
	go func() {
		defer close(s.ended)
		files.watchFiles(ctx)
	}()
	return s, nil
}

// ListenServing binds addr to serve the certificate serving holds, which
// another loop owns (ManageCertificate's), and loads cfg.ClientCAFile's
// CAs; Serve then serves until Shutdown.
func ListenServing(addr string, serving *Serving, cfg *Config, log *slog.Logger) (*Server, error) {
	certs, err := newServerTLS(serving, cfg.ClientCAFile, log)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--listen %s: %w", addr, err)
	}
	cfg.setup()
	srv := &http.Server{
		Handler:   certs.requireClient(cfg.Handler(), log),
		TLSConfig: forWebhook(certs.config()),
		// HTTP/1.1 only: the API server calls every webhook behind a
		// Service with HTTP/1.1, one request per connection at a time;
		// HTTP/2 would let one client open hundreds of streams, each a
		// handler, on one connection.
		Protocols: http1Only(),
		// The TLS handshake (the least of the three timeouts) and each
		// request's headers; /mutate bounds its body itself (BodyTimeout),
		// and ReadTimeout the whole of any other request.
		ReadHeaderTimeout: HeaderTimeout,
		ReadTimeout:       HeaderTimeout + BodyTimeout,
		WriteTimeout:      RequestTimeout + 2*time.Second,
		// Longer than the API server's client keeps an idle connection (90
		// s): it closes them first, so it never sends a review on a
		// connection the webhook is closing.
		IdleTimeout: 120 * time.Second,
		ErrorLog:    slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ConnState:   newConns(cfg.Metrics).track,
	}
	return &Server{srv: srv, listener: l, tls: true}, nil
}

// forWebhook sets what suits a client that reads whole answers and
// never resumes a session (client-go keeps no session cache): an answer
// in records as large as TLS allows, so in one write, not first in
// records of a packet each to hurry a browser's first bytes; and no
// session tickets, which the API server never uses and each handshake
// would encrypt and send.
func forWebhook(c *tls.Config) *tls.Config {
	set := func(c *tls.Config) {
		c.DynamicRecordSizingDisabled, c.SessionTicketsDisabled = true, true
	}
	set(c)
	if get := c.GetConfigForClient; get != nil {
		c.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			per, err := get(hello)
			if per != nil {
				set(per)
			}
			return per, err
		}
	}
	return c
}

func http1Only() *http.Protocols {
	var p http.Protocols
	p.SetHTTP1(true)
	return &p
}

// ListenMetrics binds addr for the plain-HTTP listener of metrics and
// health checks (MetricsHandler: no /mutate).
func ListenMetrics(addr string, cfg *Config, log *slog.Logger) (*Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-listen %s: %w", addr, err)
	}
	srv := &http.Server{
		Handler:           cfg.MetricsHandler(),
		ReadHeaderTimeout: 5 * time.Second,
		WriteTimeout:      10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	return &Server{srv: srv, listener: l}, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.listener.Addr().String() }

// Serve serves until Shutdown.
func (s *Server) Serve() error {
	var err error
	if s.tls {
		err = s.srv.ServeTLS(s.listener, "", "")
	} else {
		err = s.srv.Serve(s.listener)
	}
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops accepting and waits for requests under way, within ctx,
// and stops the loop that owns the certificate.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if s.stop != nil {
		s.stop()
		<-s.ended
	}
	return err
}
