package webhook

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/alecthomas/kong"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/job-signal/job-signal/internal/resolve"
	"github.com/job-signal/job-signal/internal/version"
)

const description = `Mutating admission webhook that adds job-signal to the Pods of Jobs.

It injects Pods created by a Job (send it those of labelled namespaces with
the namespaceSelector of its MutatingWebhookConfiguration) and Pods
labelled job-signal.dev/inject=enabled. A Pod it cannot inject is admitted
unchanged, annotated job-signal.dev/skipped with the reason. See
manifests/webhook/ and the README.`

// Cmd is job-signal-webhook's command line.
type Cmd struct {
	Listen          string        `default:":8443" placeholder:"HOST:PORT" help:"Address to serve HTTPS on (default ${default})."`
	TLSCertFile     string        `name:"tls-cert-file" required:"" placeholder:"PATH" help:"Serving certificate (PEM); reloaded when it changes."`
	TLSKeyFile      string        `name:"tls-key-file" required:"" placeholder:"PATH" help:"Its private key (PEM)."`
	Kubeconfig      string        `placeholder:"PATH" help:"Kubeconfig for reading imagePullSecrets. Default: in-cluster when run in a Pod, else no API access (pull secrets are then not used)."`
	RegistryTimeout time.Duration `default:"5s" placeholder:"DURATION" help:"Admit a Pod unchanged when its images cannot be looked up within this (default ${default}); keep it below the webhook's timeoutSeconds."`
	CacheSize       int           `default:"1024" help:"Image configs kept, by digest (default ${default})."`
	Image           string        `default:"${image}" placeholder:"IMAGE" help:"Image of the job-signal-install init container (default ${default})."`
	LogFormat       string        `enum:"text,json" default:"text" help:"Log format: text or json."`
	LogLevel        slog.Level    `default:"info" help:"Log level: debug, info, warn, error."`
}

// Main runs the webhook until SIGTERM or SIGINT and returns its exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	var c Cmd
	parser, err := kong.New(&c, kong.Name("job-signal-webhook"), kong.Description(description),
		kong.Writers(stdout, stderr), kong.Vars{"image": version.Image})
	if err != nil {
		panic(err)
	}
	if _, err := parser.Parse(args); err != nil {
		fmt.Fprintf(stderr, "job-signal-webhook: error: %v\n", err)
		return 2
	}
	log := c.logger(stderr)
	if err := c.run(log); err != nil {
		log.Error("job-signal-webhook failed", "err", err)
		return 1
	}
	return 0
}

func (c *Cmd) logger(w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.LogLevel}
	if c.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func (c *Cmd) run(log *slog.Logger) error {
	secrets, err := c.secretGetter()
	if err != nil {
		return err
	}
	cfg := &Config{
		Resolver:        resolve.New(nil, c.CacheSize),
		Secrets:         secrets,
		RegistryTimeout: c.RegistryTimeout,
		Installer:       c.Image,
		Log:             log,
	}
	srv, err := Listen(c.Listen, c.TLSCertFile, c.TLSKeyFile, cfg, log)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- srv.Serve() }()
	log.Info("serving", "addr", srv.Addr(), "version", version.String(), "api_access", secrets != nil)
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}

// secretGetter reads Secrets with the kubeconfig or the in-cluster
// account; nil when neither is there.
func (c *Cmd) secretGetter() (SecretGetter, error) {
	var config *rest.Config
	var err error
	switch {
	case c.Kubeconfig != "":
		config, err = clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	case os.Getenv("KUBERNETES_SERVICE_HOST") != "":
		config, err = rest.InClusterConfig()
	default:
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig: %w", err)
	}
	config.UserAgent = "job-signal-webhook/" + version.Release
	client, err := corev1client.NewForConfig(config)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig: %w", err)
	}
	return func(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
		return client.Secrets(namespace).Get(ctx, name, metav1.GetOptions{})
	}, nil
}
