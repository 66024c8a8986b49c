// Command standin impersonates, in the e2e suite, the third-party sidecars
// that the example manifests name and that cannot run here: Istio's Envoy
// and pilot-agent have no Debian package and no Go module. (The other
// sidecars of the suite are the real programs.) It is installed in a
// stand-in image at the real program's path and picks its part from the
// name it is run as, accepting the real program's flags, so the manifests
// run unchanged but for the image name.
//
//	pilot-agent      Istio's proxy agent: ready on :15021/healthz/ready,
//	                 quits on POST :15020/quitquitquit, and like a draining
//	                 Envoy does not stop on SIGTERM.
package main

import (
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
