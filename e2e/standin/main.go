// Command standin impersonates, in the e2e suite, the third-party sidecars
// that the example manifests name (no registry can be reached to pull the
// real ones). It is installed in a stand-in image at the real program's
// path and picks its part from the name it is run as, accepting the real
// program's flags, so the manifests run unchanged but for the image name.
//
//	pilot-agent      Istio's proxy agent: ready on :15021/healthz/ready,
//	                 quits on POST :15020/quitquitquit, and like a draining
//	                 Envoy does not stop on SIGTERM.
//	cloud-sql-proxy  Cloud SQL Auth Proxy v2: accepts connections on --port,
//	                 serves /startup /readiness /liveness with --health-check,
//	                 quits on POST :--admin-port/quitquitquit with
//	                 --quitquitquit, and exits 143 on SIGTERM.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

func main() {
	switch name := filepath.Base(os.Args[0]); name {
	case "pilot-agent":
		pilotAgent()
	case "cloud-sql-proxy":
		cloudSQLProxy(os.Args[1:])
	default:
		fmt.Fprintf(os.Stderr, "standin: unknown part %q\n", name)
		os.Exit(2)
	}
}

// startupDelay makes readiness take a moment, as in the real programs, so
// that starting the job before readiness would be caught.
const startupDelay = 700 * time.Millisecond

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s %s\n", filepath.Base(os.Args[0]), fmt.Sprintf(format, args...))
}

func pilotAgent() {
	started := time.Now()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		for sig := range sigs {
			logf("got %v: draining, not exiting (stop me with /quitquitquit)", sig)
		}
	}()
	serve("127.0.0.1:15021", "/healthz/ready", func(w http.ResponseWriter, r *http.Request) {
		ready(w, started)
	})
	serve("127.0.0.1:15020", "/quitquitquit", quit)
	logf("proxy up")
	select {}
}

func cloudSQLProxy(args []string) {
	fs := flag.NewFlagSet("cloud-sql-proxy", flag.ExitOnError)
	port := fs.Int("port", 5432, "first port for instance connections")
	address := fs.String("address", "127.0.0.1", "address to listen on")
	healthCheck := fs.Bool("health-check", false, "serve /startup, /readiness and /liveness")
	httpAddress := fs.String("http-address", "localhost", "address of the health check server")
	httpPort := fs.String("http-port", "9090", "port of the health check server")
	quitquitquit := fs.Bool("quitquitquit", false, "serve POST /quitquitquit on the admin port")
	adminPort := fs.String("admin-port", "9091", "port of the admin server")
	_ = fs.Parse(args)
	if fs.NArg() == 0 {
		logf("no instance connection name given")
		os.Exit(1)
	}
	started := time.Now()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		sig := <-sigs
		logf("got %v: exiting 143", sig)
		os.Exit(143) // as the real proxy: a Job whose sidecar it is fails
	}()
	l, err := net.Listen("tcp", fmt.Sprintf("%s:%d", *address, *port))
	if err != nil {
		logf("listen: %v", err)
		os.Exit(1)
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			logf("client connected to %s", fs.Arg(0))
			c.Close()
		}
	}()
	if *healthCheck {
		for _, path := range []string{"/startup", "/readiness", "/liveness"} {
			serve(net.JoinHostPort(*httpAddress, *httpPort), path, func(w http.ResponseWriter, r *http.Request) {
				ready(w, started)
			})
		}
	}
	if *quitquitquit {
		serve(net.JoinHostPort("localhost", *adminPort), "/quitquitquit", quit)
	}
	logf("ready for new connections to %s on port %d", fs.Arg(0), *port)
	select {}
}

var muxes = map[string]*http.ServeMux{}

// serve adds a handler, starting a server on addr at the first one.
func serve(addr, path string, h http.HandlerFunc) {
	mux := muxes[addr]
	if mux == nil {
		mux = http.NewServeMux()
		muxes[addr] = mux
		l, err := net.Listen("tcp", addr)
		if err != nil {
			logf("listen %s: %v", addr, err)
			os.Exit(1)
		}
		go http.Serve(l, mux)
	}
	mux.HandleFunc(path, h)
}

func ready(w http.ResponseWriter, started time.Time) {
	if time.Since(started) < startupDelay {
		http.Error(w, "starting", http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintln(w, "ok")
}

func quit(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	logf("quitquitquit: exiting 0")
	w.WriteHeader(http.StatusOK)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	go func() {
		time.Sleep(50 * time.Millisecond) // let the answer leave first
		os.Exit(0)
	}()
}
