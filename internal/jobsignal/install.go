package jobsignal

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/job-signal/job-signal/internal/cli"
)

// InstallCmd copies both binaries into a directory, so that an init
// container from the job-signal image can hand them to the Pod's other
// containers through a shared volume. Distroless images have no shell and
// no cp, so this is built in.
type InstallCmd struct {
	Dest string `arg:"" name:"DIR" help:"Directory to copy job-signal and sidecar-watch into (created if missing)."`
	From string `name:"from" env:"JOB_SIGNAL_INSTALL_FROM" placeholder:"DIR" help:"Directory holding both binaries (default: the directory of this job-signal)."`
}

// Run copies the binaries.
func (c *InstallCmd) Run(env *cli.Env) error {
	from := c.From
	if from == "" {
		self, err := os.Executable()
		if err != nil {
			return cli.Failf("find this executable (use --from): %w", err)
		}
		from = filepath.Dir(self)
	}
	if err := os.MkdirAll(c.Dest, 0o755); err != nil {
		return cli.Failf("install into %s: %w", c.Dest, err)
	}
	for _, name := range []string{"job-signal", "sidecar-watch"} {
		dst := filepath.Join(c.Dest, name)
		n, err := copyExecutable(filepath.Join(from, name), dst)
		if err != nil {
			return cli.Failf("install %s: %w", name, err)
		}
		env.Log.Info("installed", "file", dst, "bytes", n)
	}
	return nil
}

// copyExecutable copies src to dst atomically (temp file, then rename), so a
// container that starts while the init container is still copying can never
// run half a binary.
func copyExecutable(src, dst string) (n int64, err error) {
	in, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	info, err := in.Stat()
	if err != nil {
		return 0, err
	}
	if !info.Mode().IsRegular() {
		return 0, fmt.Errorf("%s is not a regular file", src)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp-*")
	if err != nil {
		return 0, err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if n, err = io.Copy(tmp, in); err != nil {
		return 0, fmt.Errorf("copy to %s: %w", dst, err)
	}
	if n != info.Size() {
		return 0, fmt.Errorf("copy to %s: %d of %d bytes", dst, n, info.Size())
	}
	if err = tmp.Chmod(0o755); err != nil {
		return 0, err
	}
	if err = tmp.Close(); err != nil {
		return 0, err
	}
	if err = os.Rename(tmp.Name(), dst); err != nil {
		return 0, err
	}
	return n, nil
}
