// Package kubectl is `kubectl job-signal` (the binary kubectl-job_signal):
// inject and uninject job-signal in the Jobs, CronJobs and Pods of YAML or
// JSON manifests, keeping comments, key order and every other field.
package kubectl

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/alecthomas/kong"
	"github.com/google/go-containerregistry/pkg/authn"

	"github.com/job-signal/job-signal/internal/cli"
	"github.com/job-signal/job-signal/internal/resolve"
	"github.com/job-signal/job-signal/internal/version"
)

const description = `Add job-signal to Jobs, CronJobs and Pods, or take it out again.

  kubectl job-signal inject -f job.yaml | kubectl apply -f -
  kubectl job-signal uninject -f injected.yaml

Choices come from annotations on the Pod template under job-signal.dev/
(see the README). The job is the container named by job-signal.dev/main,
else by kubectl.kubernetes.io/default-container, else the one container
that is not a known sidecar; every other container is a sidecar it waits
for, ready as its probes say. Only the lines that change are written;
uninject gives the file back byte for byte. A container without a command
gets its image's ENTRYPOINT and CMD from the registry (credentials from
the Docker config, as docker login writes them).
Other kinds pass through unchanged. On any error nothing is written to
stdout, and only the error to stderr. Exit codes: 0 done, 1 an input could
not be handled, 2 bad usage.`

// CLI is the plugin's command line.
type CLI struct {
	Inject   InjectCmd `cmd:"" help:"Add job-signal to every Job, CronJob and Pod read from -f."`
	Uninject Input     `cmd:"" help:"Undo inject (or turn job-signal added by hand into annotations)."`
	Version  struct{}  `cmd:"" help:"Print the version."`
}

// Input is the -f flag both commands share, and all that uninject takes.
type Input struct {
	Filename string `short:"f" name:"filename" required:"" placeholder:"FILE" help:"YAML or JSON manifests to read; - for standard input."`
}

// read calls do with the input -f names.
func (i Input) read(stdin io.Reader, do func(io.Reader) error) error {
	if i.Filename == "-" {
		return do(stdin)
	}
	f, err := os.Open(i.Filename)
	if err != nil {
		return fmt.Errorf("-f: %w", err)
	}
	defer f.Close()
	return do(f)
}

// InjectCmd is `kubectl job-signal inject`.
type InjectCmd struct {
	Input
	Offline         bool          `help:"Never contact a registry or the API server: a container without a command gets its image's ENTRYPOINT from the known-sidecar table (read from the images' build files, for the versions read), any other is refused, naming it; LimitRanges are not checked (a note says so)."`
	RegistryTimeout time.Duration `default:"30s" placeholder:"DURATION" help:"Give up looking up images after this long (default ${default})."`
	Image           string        `default:"${image}" placeholder:"IMAGE" help:"Image of the job-signal-install init container (default ${default}); set it to use a mirror."`
	Cluster
	Mode        string `default:"auto" enum:"pair,native,auto" placeholder:"MODE" help:"pair: job-signal's pair, on any cluster; native: Kubernetes' native sidecars (init containers with restartPolicy Always), refusing a Pod whose needs they cannot meet; auto: native where the cluster has them and they serve the Pod, else the pair (default ${default})."`
	KubeVersion string `name:"kube-version" placeholder:"vX.Y[.Z]" help:"The version of the cluster the manifests are for, the oldest of its API server and its nodes' kubelets: 1.33 or later has native sidecars (their feature gate locked on; before, any kubelet may have it off). Default: ask the kubeconfig's cluster; offline or unreachable, auto writes the pair."`
}

// Validate checks --kube-version before anything is read.
func (c *InjectCmd) Validate() error {
	if c.KubeVersion == "" {
		return nil
	}
	_, err := parseKubeVersion(c.KubeVersion)
	return err
}

// Main runs the plugin with args (without the program name) and returns
// its exit code: the front-end convention of every job-signal program
// (cli.Main), with the plugin's own flags, named as people call it.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var c CLI
	return cli.Main("kubectl job-signal", description, &c, args, stdout, stderr, nil, func(kctx *kong.Context) error {
		var err error
		switch kctx.Command() {
		case "version":
			fmt.Fprintln(stdout, "kubectl-job_signal", version.String())
		case "inject":
			err = c.Inject.read(stdin, func(in io.Reader) error { return c.Inject.run(ctx, in, stdout, stderr) })
		case "uninject":
			err = c.Uninject.read(stdin, func(in io.Reader) error { return Run(ctx, in, stdout, stderr, nil) })
		}
		if err != nil {
			return cli.Exit(1, fmt.Errorf("%s: %w", kctx.Command(), err)) // the plugin's documented code for an input it could not handle
		}
		return nil
	})
}

func (c *InjectCmd) run(ctx context.Context, in io.Reader, stdout, stderr io.Writer) error {
	opts := &Options{
		Offline:   c.Offline,
		Installer: c.Image,
		Resolver:  resolve.New(nil, 256),
		Keychain:  authn.DefaultKeychain,
		Timeout:   c.RegistryTimeout,
		Namespace: c.Namespace,
		Unchecked: "--offline",
	}
	var err error
	if opts.Target, opts.TargetNote, err = c.target(ctx); err != nil {
		return err
	}
	if !c.Offline {
		opts.LimitRanges, opts.Namespace, opts.Unchecked, err = c.limitRanges()
		if err != nil {
			return err
		}
	}
	return Run(ctx, in, stdout, stderr, opts)
}
