package demo

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

// workload plays one container's own program. Each line it prints is one
// write, stamped with when it was written and starting with its name (see
// stream).
func workload(args []string, out io.Writer) int {
	if len(args) == 0 {
		return 2
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM, syscall.SIGINT)
	say := func(format string, a ...any) { fmt.Fprintln(out, stamped(args[0]+": "+fmt.Sprintf(format, a...))) }
	switch {
	case args[0] == "proxy" && len(args) == 2:
		say("starting up (takes a moment)")
		time.Sleep(300 * time.Millisecond)
		l, err := net.Listen("tcp", args[1])
		if err != nil {
			say("%v", err)
			return 1
		}
		say("listening on %s", args[1])
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				fmt.Fprintln(c, "pong")
				c.Close()
			}
		}()
		<-term
		say("SIGTERM, closing connections")
		return 0
	case args[0] == "config" && len(args) == 3:
		if _, err := ping(args[1]); err != nil {
			say("cannot reach the proxy: %v", err)
			return 1
		}
		say("fetched configuration through the proxy")
		if err := os.WriteFile(args[2], []byte("{}"), 0o644); err != nil {
			say("%v", err)
			return 1
		}
		<-term
		say("SIGTERM, bye")
		return 0
	case args[0] == "logs" && len(args) == 1:
		say("shipping logs")
		<-term
		say("SIGTERM, flushing buffered logs")
		return 0
	case args[0] == "job" && len(args) == 3:
		return job(args[1], args[2], say)
	}
	return 2
}

// job talks through the proxy, then ends as the scene says.
func job(addr, end string, say func(string, ...any)) int {
	for i := 1; i <= 2; i++ {
		answer, err := ping(addr)
		if err != nil {
			say("request failed: %v", err)
			return 1
		}
		say("request %d through the proxy: %s", i, answer)
		time.Sleep(100 * time.Millisecond)
	}
	if end == "kill" {
		// What the kernel does to a container OOM-killed as a whole:
		// SIGKILL to every process, job-signal included, which can then
		// write nothing.
		say("over its memory limit: SIGKILL to job-signal (pid %d) and to the job, as an OOM kill of the container does", os.Getppid())
		syscall.Kill(os.Getppid(), syscall.SIGKILL)
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	code, _ := strconv.Atoi(end)
	say("finished, exiting with code %d", code)
	return code
}

func ping(addr string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	return string(line[:max(len(line)-1, 0)]), err
}
