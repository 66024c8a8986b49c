package demo

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
)

// container is one process of the Pod: job-signal or a sidecar-watch.
type container struct {
	name string
	args []string
	cmd  *exec.Cmd
	code int // as Kubernetes reports it: 128+N when signal N killed it
}

// pod is the scene's containers.
func (d *demo) pod(s scene, dir, addr, config string) []*container {
	sw := filepath.Join(d.bin, "sidecar-watch")
	return []*container{
		{name: "proxy", args: []string{sw, "--name", "proxy", "--ready-tcp", addr, "--stop-after", "config,logs", "--",
			d.self, "workload", "proxy", addr}},
		{name: "config", args: []string{sw, "--name", "config", "--after", "proxy", "--ready-file", config, "--",
			d.self, "workload", "config", addr, config}},
		{name: "logs", args: []string{sw, "--name", "logs", "--", d.self, "workload", "logs"}},
		{name: "job", args: []string{filepath.Join(d.bin, "job-signal"), "--wait-for", "proxy,config", "--",
			d.self, "workload", "job", addr, s.job}},
	}
}

// runScene runs the Pod until every container has exited, shows what
// happened in order and what the directory says, and returns the Pod's
// phase as Kubernetes would decide it.
func (d *demo) runScene(s scene) (string, error) {
	work := filepath.Join(d.work, s.name)
	dir := filepath.Join(work, "signal")
	if err := os.MkdirAll(work, 0o755); err != nil {
		return "", err
	}
	addr, err := freeAddr()
	if err != nil {
		return "", err
	}
	pod := d.pod(s, dir, addr, filepath.Join(work, "config.json"))
	fmt.Fprintf(d.out, "Shared directory: %s\n\n", dir)
	st, err := newStream(d.out)
	if err != nil {
		return "", err
	}
	var wg sync.WaitGroup
	for _, c := range pod {
		c.cmd = exec.Command(c.args[0], c.args[1:]...)
		// JSON logs: their times have nanoseconds, for the stream's order.
		c.cmd.Env = append(os.Environ(), "JOB_SIGNAL_DIR="+dir, "JOB_SIGNAL_TERMINATION_LOG=", "JOB_SIGNAL_LOG_FORMAT=json")
		c.cmd.Stdout, c.cmd.Stderr = st.w, st.w
		if err := c.cmd.Start(); err != nil {
			for _, started := range pod {
				if started.cmd.Process != nil {
					started.cmd.Process.Kill()
				}
			}
			wg.Wait()
			st.close()
			return "", err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.cmd.Wait()
			c.code = exitCode(c.cmd.ProcessState)
			st.note("%s container exited with code %d", c.name, c.code)
		}()
	}
	wg.Wait()
	st.close()
	// The Pod's phase once every container has exited: Succeeded when each exited 0.
	verdict := "Succeeded"
	if slices.ContainsFunc(pod, func(c *container) bool { return c.code != 0 }) {
		verdict = "Failed"
	}
	fmt.Fprintf(d.out, "\nThe Pod would be %s (expected %s):", verdict, s.want)
	for _, c := range pod {
		fmt.Fprintf(d.out, " %s %d", c.name, c.code)
	}
	fmt.Fprintf(d.out, ". What the directory says (job-signal status):\n\n")
	status := exec.Command(filepath.Join(d.bin, "job-signal"), "status", "--dir", dir)
	status.Stdout, status.Stderr = d.out, d.out
	status.Run() // exits non-zero when the job failed: what it prints is what matters
	return verdict, nil
}

// exitCode is a container's exit code as the kubelet reports it.
func exitCode(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
