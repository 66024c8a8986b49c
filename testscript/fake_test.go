package scripttest

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// maxLifetime ends any fake, however it was told to wait.
const maxLifetime = 10 * time.Minute

// fakeMain is a workload for the scripts: a job or a sidecar whose
// behaviour the flags choose. It never sleeps for a fixed time: it waits
// for files or signals.
func fakeMain(args []string) int {
	fs := flag.NewFlagSet("fake", flag.ContinueOnError)
	var (
		pidfile    = fs.String("pidfile", "", "write the PID here once set up")
		touch      = fs.String("touch", "", "create this file once set up (after -pidfile, -record, -listen)")
		record     = fs.String("record", "", "append the name of every signal received to this file")
		label      = fs.String("label", "", "prefix recorded signal names with this label and a space")
		onTerm     = fs.String("term", "die", "on TERM or INT: die (by the signal), ignore, or exit:N")
		listen     = fs.String("listen", "", "accept TCP connections on this address")
		listenWhen = fs.String("listen-when", "", "start -listen only once this file exists")
		httpAddr   = fs.String("http", "", "serve HTTP here: GET / answers 200, POST /quit per -quit")
		quit       = fs.String("quit", "exit", "POST /quit: exit (answer 200, exit 0), ignore (answer 200, keep running), fail (answer 500)")
		grandchild = fs.String("grandchild", "", "start a grandchild in the same process group that ignores TERM; its PID goes here")
		doubleFork = fs.String("double-fork", "", "start an orphan (via an intermediate that exits at once) that writes its PID here and exits when FILE.exit exists")
		waitFile   = fs.String("wait-file", "", "exit once this file exists")
		exitCode   = fs.Int("exit", -1, "exit with this code (at once, or when -wait-file exists)")
		killSelf   = fs.String("kill-self", "", "kill itself with this signal")
		crashes    = fs.Int("crash", 0, "exit 1 at once the first N runs (counted in -counter)")
		counter    = fs.String("counter", "", "file counting runs, for -crash")
		printEnv   = fs.String("print-env", "", "print the value of this environment variable")
		orphanOf   = fs.String("double-fork-child", "", "(internal) the intermediate of -double-fork")
		readLine   = fs.Bool("read-line", false, "read a line from stdin, print it and exit")
	)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	// A fake that a broken script leaves behind must not run for ever.
	time.AfterFunc(maxLifetime, func() {
		fmt.Fprintln(os.Stderr, "fake: lived", maxLifetime, "- exiting")
		os.Exit(98)
	})
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "fake:", err)
		return 99
	}
	if *orphanOf != "" {
		// Start the orphan and exit at once, leaving it without a parent.
		self, _ := os.Executable()
		cmd := exec.Command(self, "-pidfile", *orphanOf, "-wait-file", *orphanOf+".exit")
		cmd.Args[0] = "fake"
		if err := cmd.Start(); err != nil {
			return fail(err)
		}
		return 0
	}
	if *counter != "" {
		n := 0
		if data, err := os.ReadFile(*counter); err == nil {
			n, _ = strconv.Atoi(strings.TrimSpace(string(data)))
		}
		n++
		if err := os.WriteFile(*counter, []byte(strconv.Itoa(n)), 0o644); err != nil {
			return fail(err)
		}
		if n <= *crashes {
			fmt.Fprintf(os.Stderr, "fake: crashing on purpose (run %d of %d)\n", n, *crashes)
			return 1
		}
	}
	if *readLine {
		line, err := bufio.NewReader(os.Stdin).ReadString('\n')
		if err != nil {
			return fail(err)
		}
		fmt.Printf("read: %s", line)
		return 0
	}
	if *printEnv != "" {
		fmt.Printf("%s=%s\n", *printEnv, os.Getenv(*printEnv))
	}
	if *killSelf != "" {
		sig := map[string]syscall.Signal{"KILL": syscall.SIGKILL, "TERM": syscall.SIGTERM, "SEGV": syscall.SIGSEGV, "INT": syscall.SIGINT, "HUP": syscall.SIGHUP}[*killSelf]
		signal.Reset()
		syscall.Kill(os.Getpid(), sig)
		select {} // the signal ends us
	}

	signals := make(chan os.Signal, 16)
	if *record != "" || *onTerm != "die" {
		signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2)
	}
	if *pidfile != "" {
		if err := writeAtomic(*pidfile, strconv.Itoa(os.Getpid())); err != nil {
			return fail(err)
		}
	}
	if *grandchild != "" {
		self, _ := os.Executable()
		cmd := exec.Command(self, "-pidfile", *grandchild, "-term", "ignore")
		cmd.Args[0] = "fake"
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Start(); err != nil {
			return fail(err)
		}
		waitForFile(*grandchild)
	}
	if *doubleFork != "" {
		self, _ := os.Executable()
		// The intermediate starts the orphan and exits at once; we reap
		// the intermediate, so the orphan is re-parented to the nearest
		// subreaper or PID 1.
		cmd := exec.Command(self, "-double-fork-child", *doubleFork)
		cmd.Args[0] = "fake"
		if err := cmd.Run(); err != nil {
			return fail(err)
		}
		waitForFile(*doubleFork)
	}
	if *listen != "" {
		if *listenWhen != "" {
			waitForFile(*listenWhen)
		}
		l, err := net.Listen("tcp", *listen)
		if err != nil {
			return fail(err)
		}
		go acceptAll(l)
	}
	if *httpAddr != "" {
		l, err := net.Listen("tcp", *httpAddr)
		if err != nil {
			return fail(err)
		}
		go http.Serve(l, quitHandler(*quit))
	}
	if *touch != "" {
		if err := writeAtomic(*touch, ""); err != nil {
			return fail(err)
		}
	}
	if *exitCode >= 0 && *waitFile == "" {
		return *exitCode
	}
	var fileAppeared <-chan struct{}
	if *waitFile != "" {
		fileAppeared = watchFile(*waitFile)
	}
	for {
		select {
		case <-fileAppeared:
			return max(*exitCode, 0)
		case s := <-signals:
			sig := s.(syscall.Signal)
			if *record != "" {
				line := signalName(sig)
				if *label != "" {
					line = *label + " " + line
				}
				appendLine(*record, line)
			}
			if sig != syscall.SIGTERM && sig != syscall.SIGINT {
				continue
			}
			switch {
			case *onTerm == "ignore":
			case strings.HasPrefix(*onTerm, "exit:"):
				n, _ := strconv.Atoi(strings.TrimPrefix(*onTerm, "exit:"))
				return n
			default:
				signal.Reset(sig)
				syscall.Kill(os.Getpid(), sig)
				select {}
			}
		}
	}
}

func quitHandler(mode string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("POST /quit", func(w http.ResponseWriter, r *http.Request) {
		if mode == "fail" {
			http.Error(w, "no", http.StatusInternalServerError)
			return
		}
		fmt.Fprintln(w, "bye")
		if mode == "exit" {
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
			go func() {
				appendLine("quit-called", "quit")
				os.Exit(0)
			}()
		}
	})
	return mux
}

func acceptAll(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		c.Close()
	}
}

func signalName(sig syscall.Signal) string {
	names := map[syscall.Signal]string{syscall.SIGTERM: "TERM", syscall.SIGINT: "INT", syscall.SIGHUP: "HUP",
		syscall.SIGQUIT: "QUIT", syscall.SIGUSR1: "USR1", syscall.SIGUSR2: "USR2"}
	return names[sig]
}

func writeAtomic(path, content string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func appendLine(path, line string) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	fmt.Fprintln(f, line)
	f.Close()
}

// watchFile returns a channel closed once path exists.
func watchFile(path string) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		waitForFile(path)
		close(ch)
	}()
	return ch
}

func waitForFile(path string) {
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}
