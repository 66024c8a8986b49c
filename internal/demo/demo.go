// Package demo shows job-signal and sidecar-watch at work without
// Kubernetes: the processes a Job Pod would run, sharing a temporary
// directory as the Pod's containers share an emptyDir.
//
// The Pod has a network proxy, a config agent that may only start once the
// proxy is up (--after proxy), and a log shipper. The job waits for the
// proxy and the config agent (--wait-for), talks through the proxy, and
// exits. Then the config agent and the log shipper stop, and the proxy
// stops last (--stop-after config,logs).
package demo

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Main runs the demo, or one of its workloads when args start with
// "workload".
func Main(args []string) int {
	if len(args) > 0 && args[0] == "workload" {
		return workload(args[1:])
	}
	fs := flag.NewFlagSet("job-signal-demo", flag.ContinueOnError)
	bin := fs.String("bin", "bin", "directory holding job-signal and sidecar-watch")
	jobExit := fs.Int("job-exit", 0, "exit code of the demo job")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	d, err := newDemo(*bin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		return 1
	}
	defer os.RemoveAll(d.work)
	return d.run(*jobExit)
}

type demo struct {
	bin, work, self string
	port            int
	start           time.Time
	out             sync.Mutex
}

func newDemo(bin string) (*demo, error) {
	abs, err := filepath.Abs(bin)
	if err != nil {
		return nil, err
	}
	for _, prog := range []string{"job-signal", "sidecar-watch"} {
		if _, err := os.Stat(filepath.Join(abs, prog)); err != nil {
			return nil, fmt.Errorf("%v (run 'make build' first, or pass -bin)", err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "job-signal-demo-")
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return &demo{bin: abs, work: work, self: self, port: port}, nil
}

// container is one process of the Pod.
type container struct {
	name string
	args []string
	cmd  *exec.Cmd
	code int
}

func (d *demo) run(jobExit int) int {
	dir := filepath.Join(d.work, "signal")
	addr := "127.0.0.1:" + strconv.Itoa(d.port)
	config := filepath.Join(d.work, "config.json")
	sw := filepath.Join(d.bin, "sidecar-watch")
	js := filepath.Join(d.bin, "job-signal")
	pod := []*container{
		{name: "proxy", args: []string{sw, "--name", "proxy", "--ready-tcp", addr, "--stop-after", "config,logs", "--",
			d.self, "workload", "proxy", addr}},
		{name: "config", args: []string{sw, "--name", "config", "--after", "proxy", "--ready-file", config, "--",
			d.self, "workload", "config", addr, config}},
		{name: "logs", args: []string{sw, "--name", "logs", "--", d.self, "workload", "logs"}},
		{name: "job", args: []string{js, "--wait-for", "proxy,config", "--", d.self, "workload", "job", addr, strconv.Itoa(jobExit)}},
	}
	fmt.Printf("job-signal demo: a Job Pod with a proxy, a config agent (starts after the proxy) and a log shipper;\n")
	fmt.Printf("the proxy stops last. Shared directory: %s\n\n", dir)
	d.start = time.Now()
	var wg sync.WaitGroup
	for _, c := range pod {
		c.cmd = exec.Command(c.args[0], c.args[1:]...)
		c.cmd.Env = append(os.Environ(), "JOB_SIGNAL_DIR="+dir, "JOB_SIGNAL_TERMINATION_LOG=")
		pr, pw := io.Pipe()
		c.cmd.Stdout, c.cmd.Stderr = pw, pw
		if err := c.cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "demo:", err)
			return 1
		}
		wg.Add(2)
		go func() {
			defer wg.Done()
			d.copyLines(c.name, pr)
		}()
		go func() {
			defer wg.Done()
			c.cmd.Wait()
			c.code = c.cmd.ProcessState.ExitCode()
			pw.Close()
			d.say("demo", fmt.Sprintf("%s container exited with code %d", c.name, c.code))
		}()
	}
	wg.Wait()
	fmt.Printf("\nAll containers exited after %s:\n", time.Since(d.start).Round(time.Millisecond))
	for _, c := range pod {
		fmt.Printf("  %-7s exit code %d\n", c.name, c.code)
	}
	fmt.Printf("\nThe Pod would be %s. What the directory says (job-signal status):\n\n", phase(pod))
	status := exec.Command(js, "status", "--dir", dir)
	status.Stdout, status.Stderr = os.Stdout, os.Stderr
	status.Run()
	return 0
}

func phase(pod []*container) string {
	for _, c := range pod {
		if c.code != 0 {
			return "Failed"
		}
	}
	return "Succeeded"
}

// noise is what the demo drops from log lines to keep them short.
var noise = regexp.MustCompile(`time=\S+ | prog=\S+| sidecar=\S+`)

func (d *demo) copyLines(name string, r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		d.say(name, noise.ReplaceAllString(sc.Text(), ""))
	}
}

func (d *demo) say(who, line string) {
	d.out.Lock()
	defer d.out.Unlock()
	fmt.Printf("%+8.3fs  %-6s | %s\n", time.Since(d.start).Seconds(), who, line)
}

// workload plays one container's own program.
func workload(args []string) int {
	if len(args) == 0 {
		return 2
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM, syscall.SIGINT)
	switch args[0] {
	case "proxy":
		fmt.Println("proxy: starting up (takes a moment)")
		time.Sleep(400 * time.Millisecond)
		l, err := net.Listen("tcp", args[1])
		if err != nil {
			fmt.Println("proxy:", err)
			return 1
		}
		fmt.Println("proxy: listening on", args[1])
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
		fmt.Println("proxy: SIGTERM, closing connections")
		return 0
	case "config":
		if _, err := ping(args[1]); err != nil {
			fmt.Println("config: cannot reach the proxy:", err)
			return 1
		}
		fmt.Println("config: fetched configuration through the proxy")
		os.WriteFile(args[2], []byte("{}"), 0o644)
		<-term
		fmt.Println("config: SIGTERM, bye")
		return 0
	case "logs":
		fmt.Println("logs: shipping logs")
		<-term
		fmt.Println("logs: SIGTERM, flushing buffered logs")
		return 0
	case "job":
		for i := 1; i <= 3; i++ {
			answer, err := ping(args[1])
			if err != nil {
				fmt.Println("job: request failed:", err)
				return 1
			}
			fmt.Printf("job: request %d through the proxy: %s\n", i, answer)
			time.Sleep(200 * time.Millisecond)
		}
		code, _ := strconv.Atoi(args[2])
		fmt.Println("job: finished, exiting with code", code)
		return code
	}
	return 2
}

func ping(addr string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	line, err := bufio.NewReader(c).ReadString('\n')
	return string(line[:max(len(line)-1, 0)]), err
}
