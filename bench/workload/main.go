// Command workload is the job and sidecar that make bench measures with:
// it records, as Unix nanoseconds in a file, the moments the benchmarks
// are about (a job's exit, a sidecar receiving its stop signal, a port
// opening, a job starting), and does nothing else.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

func main() {
	role := flag.String("role", "", "job or sidecar")
	listenAfter := flag.Duration("listen-after", 0, "sidecar: wait this long before opening the port (a start-up time)")
	exitFile := flag.String("exit-file", "", "job: write the time just before exiting here")
	startFile := flag.String("start-file", "", "job: write the start time here")
	termFile := flag.String("term-file", "", "sidecar: write the time SIGTERM arrived here")
	listen := flag.String("listen", "", "sidecar: open this TCP port and write the time here (with -open-file)")
	openFile := flag.String("open-file", "", "sidecar: where the time the port opened goes")
	readyFile := flag.String("ready-file", "", "sidecar: create this file once SIGTERM is caught")
	flag.Parse()

	switch *role {
	case "job":
		if *startFile != "" {
			stamp(*startFile)
		}
		if *exitFile != "" {
			stamp(*exitFile)
		}
		os.Exit(0)
	case "sidecar":
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		if *readyFile != "" {
			if err := os.WriteFile(*readyFile, nil, 0o644); err != nil {
				fmt.Fprintln(os.Stderr, "workload:", err)
				os.Exit(1)
			}
		}
		if *listen != "" {
			time.Sleep(*listenAfter)
			l, err := net.Listen("tcp", *listen)
			if err != nil {
				fmt.Fprintln(os.Stderr, "workload:", err)
				os.Exit(1)
			}
			stamp(*openFile)
			go func() {
				for {
					c, err := l.Accept()
					if err != nil {
						return
					}
					c.Close()
				}
			}()
		}
		<-term
		if *termFile != "" {
			stamp(*termFile)
		}
		os.Exit(0)
	default:
		fmt.Fprintln(os.Stderr, "workload: -role job|sidecar")
		os.Exit(2)
	}
}

// stamp writes the current time; taken first, before any I/O.
func stamp(path string) {
	now := time.Now().UnixNano()
	if err := os.WriteFile(path, []byte(strconv.FormatInt(now, 10)), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "workload:", err)
		os.Exit(1)
	}
}
