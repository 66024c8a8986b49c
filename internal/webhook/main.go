// The webhook command: its flags, its API readers and the listeners it serves: long because the flags and
// what each starts are one reading of the command.

package webhook

import (
	"context"
	"errors"
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
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/job-signal/job-signal/inject"
	"github.com/job-signal/job-signal/internal/cli"
	"github.com/job-signal/job-signal/internal/kubeapi"
	"github.com/job-signal/job-signal/internal/resolve"
	"github.com/job-signal/job-signal/internal/version"
)

const description = `Mutating admission webhook that adds job-signal to the Pods of Jobs.

It injects Pods created by a Job (send it those of labelled namespaces with
the namespaceSelector of its MutatingWebhookConfiguration) and Pods
labelled job-signal.dev/inject=enabled. A Pod of more than one container
that it cannot inject because of a failure that may pass (a registry or the
API server unavailable) is denied for now, and the Job controller creates it
again; with --failure-policy=Ignore, and for lasting refusals, the Pod is
admitted unchanged, annotated job-signal.dev/skipped with the reason. See
manifests/webhook/ and the README.

Run 'job-signal-webhook serve --help' for the flags of serving.`

// Cmd is job-signal-webhook's command line.
type Cmd struct {
	Listen                string        `default:":8443" placeholder:"HOST:PORT" help:"Address to serve HTTPS on (default ${default})."`
	TLSCertFile           string        `name:"tls-cert-file" placeholder:"PATH" help:"Serving certificate (PEM), read again when it changes: cert-manager's or your own, mounted from a Secret. Or --certificate-secret."`
	TLSKeyFile            string        `name:"tls-key-file" placeholder:"PATH" help:"Its private key (PEM)."`
	CertificateSecret     string        `name:"certificate-secret" placeholder:"NAME" help:"Instead of --tls-cert-file: make and renew the serving certificate itself, kept in this Secret of the webhook's namespace (the chart renders it, empty; the webhook needs get, list, watch and update on it), with a CA of its own put in the caBundle of each --webhook-configuration. Renewed when a third of --certificate-validity is left: the new CA is trusted before the new certificate is served, and the old one until it expires."`
	WebhookConfigurations []string      `name:"webhook-configuration" placeholder:"NAME" help:"With --certificate-secret: a MutatingWebhookConfiguration whose webhooks' caBundle the webhook sets (get, list, watch and patch on it); repeat for several."`
	CertificateHosts      []string      `name:"certificate-hosts" placeholder:"HOST" help:"With --certificate-secret: the DNS names and IP addresses the certificate is for, those the API server calls (a Service's: SERVICE.NAMESPACE.svc)."`
	CertificateValidity   time.Duration `name:"certificate-validity" default:"8760h" placeholder:"DURATION" help:"With --certificate-secret: how long each certificate it issues is valid, at least 1m (default ${default})."`
	PodName               string        `name:"pod-name" env:"JOB_SIGNAL_WEBHOOK_POD_NAME" placeholder:"NAME" help:"The webhook's Pod, which the Warning Event about a serving certificate within 30 days of its expiry is about (the chart sets it from the downward API). Empty: the log line only."`
	PodUID                string        `name:"pod-uid" env:"JOB_SIGNAL_WEBHOOK_POD_UID" placeholder:"UID" help:"The Pod's UID, by which kubectl describe pod finds that Event."`
	Kubeconfig            string        `placeholder:"PATH" help:"Kubeconfig for reading imagePullSecrets, LimitRanges, and with --mode auto or native the API server's version and the Nodes. Default: in-cluster when run in a Pod, else no API access (pull secrets are then not used, LimitRanges not checked, auto gives the pair)."`
	RegistryTimeout       time.Duration `default:"5s" placeholder:"DURATION" help:"Give up looking a Pod's images up after this (default ${default}); keep it below the webhook's timeoutSeconds."`
	FailurePolicy         string        `enum:"Fail,Ignore" default:"Fail" env:"JOB_SIGNAL_WEBHOOK_FAILURE_POLICY" help:"What happens to a Pod that needs job-signal when a failure that may pass keeps the webhook from injecting it: Fail denies it (the Job controller creates it again), Ignore admits it without job-signal. Keep it equal to the failurePolicy of the webhook configuration (default ${default})."`
	ClientCAFile          string        `name:"client-ca-file" placeholder:"PATH" help:"Require a client certificate signed by a CA in this file (PEM; reloaded when it changes) for every request on --listen but /healthz: only an API server configured to present one (its admission-control kubeconfig; see the README) may ask for admission."`
	MetricsListen         string        `placeholder:"HOST:PORT" help:"Also serve /metrics and /healthz (nothing else: admission requests only on --listen) over plain HTTP here; /metrics is always served on --listen too."`
	MaxInFlight           int           `default:"64" help:"Admission requests answered at once; more are answered busy (default ${default})."`
	CacheSize             int           `default:"1024" help:"Image configs kept, by repository and digest (default ${default})."`
	Image                 string        `default:"${image}" placeholder:"IMAGE" help:"Image of the job-signal-install init container (default ${default})."`
	Mode                  string        `default:"auto" placeholder:"pair|native|auto" help:"The form Pods are given: pair (job-signal and sidecar-watch, on every cluster), native (native sidecars; a Pod whose sidecars need what they lack is admitted without job-signal, the reason recorded) or auto (native sidecars where the API server and every Node's kubelet have them, 1.33 or later, and they serve the Pod, else the pair; the pair until the cluster is first read) (default ${default})."`
	DetectInterval        time.Duration `name:"detect-interval" default:"10m" nonzero:"" placeholder:"DURATION" help:"With --mode auto or native, how often to ask the API server its version again; the Nodes' kubelet versions are watched (list and watch on nodes) (default ${default})."`
	Namespace             string        `placeholder:"NAMESPACE" help:"The webhook's own namespace, where its --certificate-secret is kept and its Events are recorded. Default: its Pod's namespace in a cluster, else the --kubeconfig context's."`
	cli.LogOptions
	Version kong.VersionFlag `name:"version" help:"Print the version and exit."`

	mode inject.Mode // Mode parsed, set by Validate
}

// Validate checks what kong's tags cannot; kong calls it after parsing,
// and its errors are usage errors naming the flag.
func (c *Cmd) Validate() error {
	mode, err := inject.ParseMode(c.Mode)
	if err != nil {
		return cli.Invalid(fmt.Errorf("--mode: %w", err))
	}
	c.mode = mode
	if err := c.validateCertificate(); err != nil {
		return cli.Invalid(err)
	}
	return cli.Invalid(cli.CheckDurations(c))
}

// program is the webhook's name in its help, errors and log lines.
const program = "job-signal-webhook"

// CLI is job-signal-webhook's command line: serving admission requests,
// the default (Cmd's flags), and unregister, which the chart's pre-delete
// hook runs.
type CLI struct {
	Serve      Cmd           `cmd:"" default:"withargs" help:"Serve admission requests (the default: 'serve' may be left out)."`
	Unregister UnregisterCmd `cmd:"" help:"Delete the webhook's registration, then wait for the API servers to drop it: what helm uninstall runs first (the chart's pre-delete hook)."`
}

// Format is the log format of the command given: errors are written in
// it too.
func (c *CLI) Format() string {
	if c.Serve.LogFormat == "json" || c.Unregister.LogFormat == "json" {
		return "json"
	}
	return "text"
}

// Main runs the webhook until SIGTERM or SIGINT (or unregister, to its
// end) and returns its exit code: the front-end convention of every
// job-signal program (cli.Main), with the webhook's own flags.
func Main(args []string, stdout, stderr io.Writer) int {
	var c CLI
	return cli.Main(program, description, &c, args, stdout, stderr, nil, func(kctx *kong.Context) error {
		var err error
		if kctx.Command() == "unregister" {
			err = c.Unregister.run(c.Unregister.Logger(stderr, program))
		} else {
			err = c.Serve.run(c.Serve.Logger(stderr, program))
		}
		if err != nil {
			return cli.Exit(1, err)
		}
		return nil
	})
}

func (c *Cmd) run(log *slog.Logger) error {
	tuneRuntime(runtimeFor(os.Getenv))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	api, err := c.apiAccess(ctx, log)
	if err != nil {
		return err
	}
	cfg := &Config{
		Resolver:        resolve.New(nil, c.CacheSize),
		Secrets:         api.secrets,
		LimitRanges:     api.limitRanges,
		RegistryTimeout: c.RegistryTimeout,
		Installer:       c.Image,
		FailurePolicy:   c.FailurePolicy,
		MaxInFlight:     c.MaxInFlight,
		ClientCAFile:    c.ClientCAFile,
		Log:             log,
		Mode:            c.mode,
	}
	switch {
	case c.mode == inject.ModePair:
		log.Info("mode pair: every Pod gets job-signal's pair; the cluster is not checked")
	case api.cluster == nil:
		log.Warn("no API access: the cluster cannot be checked for native sidecars (mode auto gives the pair)", "mode", c.mode)
	default:
		go cfg.WatchCluster(ctx, *api.cluster, c.DetectInterval)
	}
	if api.events != nil && c.PodName != "" {
		cfg.Events = PodEvents(api.events, api.namespace, c.PodName, c.PodUID)
	}
	srv, err := c.listen(ctx, api, cfg, log)
	if err != nil {
		return err
	}
	done := make(chan error, 2)
	go func() { done <- srv.Serve() }()
	var metrics *Server
	if c.MetricsListen != "" {
		if metrics, err = ListenMetrics(c.MetricsListen, cfg, log); err != nil {
			return err
		}
		go func() {
			if err := metrics.Serve(); err != nil {
				done <- fmt.Errorf("--metrics-listen: %w", err)
			}
		}()
		log.Info("serving metrics", "metricsAddr", metrics.Addr())
	}
	log.Info("serving", "addr", srv.Addr(), "version", version.String(), "api_access", api.secrets != nil, "mode", c.mode,
		"failurePolicy", c.FailurePolicy, "clientCertificates", c.ClientCAFile != "", "certificate", c.certificateSource())
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if metrics != nil {
		metrics.Shutdown(shutdown)
	}
	return srv.Shutdown(shutdown)
}

// apiReaders is what the webhook reads through the API server: pull
// secrets (in enabled namespaces only; see manifests/webhook), LimitRanges
// (watched, all namespaces) and what the cluster offers (its version, and
// the Nodes' kubelet versions, watched). All nil without API access.
type apiReaders struct {
	secrets     SecretGetter
	limitRanges LimitRangeLister
	cluster     *ClusterSource
	// What the serving certificate needs: the connection, the webhook's
	// namespace, a client to record Events with.
	config    *rest.Config
	namespace string
	events    rest.Interface
}

// apiAccess connects with the kubeconfig or the in-cluster account, and
// starts watching LimitRanges; it returns once their cache is filled.
func (c *Cmd) apiAccess(ctx context.Context, log *slog.Logger) (apiReaders, error) {
	if c.Kubeconfig == "" && os.Getenv("KUBERNETES_SERVICE_HOST") == "" {
		log.Warn("no API access (no --kubeconfig, not in a Pod): pull secrets are not used and LimitRanges not checked")
		return apiReaders{}, nil
	}
	config, err := restConfig(c.Kubeconfig)
	if err != nil {
		return apiReaders{}, fmt.Errorf("--kubeconfig: %w", err)
	}
	client, err := kubeapi.CoreClient(config)
	if err != nil {
		return apiReaders{}, fmt.Errorf("--kubeconfig: %w", err)
	}
	informer := cache.NewSharedIndexInformer(
		cache.NewListWatchFromClient(client, "limitranges", metav1.NamespaceAll, fields.Everything()),
		&corev1.LimitRange{}, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	go informer.Run(ctx.Done())
	synced, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if !cache.WaitForCacheSync(synced.Done(), informer.HasSynced) {
		return apiReaders{}, errors.New("could not list LimitRanges within 30 s: check the API server and the webhook's RBAC (list and watch limitranges)")
	}
	lister := corev1listers.NewLimitRangeLister(informer.GetIndexer())
	var cluster *ClusterSource
	if c.mode != inject.ModePair { // the pair needs no answer
		informer, err := kubeapi.NodeInformer(config)
		if err != nil {
			return apiReaders{}, fmt.Errorf("--kubeconfig: %w", err)
		}
		nodes, err := newInformerNodes(informer)
		if err != nil {
			return apiReaders{}, err
		}
		versions, err := kubeapi.CoreClient(kubeapi.Bounded(config, kubeapi.MaxAnswer))
		if err != nil {
			return apiReaders{}, fmt.Errorf("--kubeconfig: %w", err)
		}
		cluster = &ClusterSource{Nodes: nodes, Version: func(ctx context.Context) (string, error) {
			ctx, cancel := context.WithTimeout(ctx, kubeapi.DetectTimeout)
			defer cancel()
			return kubeapi.ServerVersion(ctx, versions)
		}}
	}
	var namespace string
	// A certificate from files needs no namespace. Events are recorded
	// where the webhook is known to run, else only logged.
	if c.CertificateSecret != "" || c.PodName != "" {
		if namespace, err = c.ownNamespace(); err != nil {
			return apiReaders{}, err
		}
	}
	events, err := kubeapi.CoreClient(kubeapi.Bounded(config, maxCertificateAnswer))
	if err != nil {
		return apiReaders{}, fmt.Errorf("--kubeconfig: %w", err)
	}
	return apiReaders{
		cluster: cluster,
		config:  config, namespace: namespace, events: events,
		secrets: func(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
			secret := &corev1.Secret{}
			err := client.Get().Namespace(namespace).Resource("secrets").Name(name).Do(ctx).Into(secret)
			return secret, err
		},
		limitRanges: func(namespace string) ([]corev1.LimitRange, error) {
			list, err := lister.LimitRanges(namespace).List(labels.Everything())
			out := make([]corev1.LimitRange, 0, len(list))
			for _, lr := range list {
				out = append(out, *lr)
			}
			return out, err
		},
	}, nil
}

// restConfig connects to the API server with kubeconfig, else with the
// in-cluster account, as job-signal-webhook: serve and unregister alike.
func restConfig(kubeconfig string) (config *rest.Config, err error) {
	if kubeconfig != "" {
		config, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	} else {
		config, err = rest.InClusterConfig()
	}
	if err == nil {
		config.UserAgent = program + "/" + version.Release
	}
	return config, err
}
