package webhook

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/job-signal/job-signal/inject"
)

// Metrics are what operators watch, in the Prometheus text format at
// /metrics. Labels take values from bounded sets (outcomes, reason
// classes, lookup results), never free text.
type Metrics struct {
	registry   *prometheus.Registry
	admissions *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	inFlight   prometheus.Gauge
	bodyBytes  prometheus.Gauge
	bodyTime   prometheus.Histogram
	bodiesCut  prometheus.Counter
	lookups    *prometheus.HistogramVec
	forms      *prometheus.CounterVec
	checks     *prometheus.CounterVec
	native     *prometheus.GaugeVec
	heldBack   prometheus.Gauge
	// The HTTPS listener's connections (conns).
	connections prometheus.Counter
	open        *prometheus.GaugeVec
	dropped     *prometheus.CounterVec
	expiry      prometheus.Gauge
	certSteps   *prometheus.CounterVec
	certFails   prometheus.Counter
}

// latencyBuckets are the seconds of an admission and of an image lookup.
var latencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// NewMetrics registers the webhook's metrics, and the Go runtime's and
// the process's, in a registry of their own.
func NewMetrics() *Metrics {
	registry := prometheus.NewRegistry()
	registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	f := promauto.With(registry) // registers each metric it makes
	m := &Metrics{
		registry: registry,
		admissions: f.NewCounterVec(prometheus.CounterOpts{Name: "job_signal_webhook_admissions_total",
			Help: "Pods and Jobs reviewed, by outcome (injected, skipped: admitted without job-signal, denied: to be created again, unchanged: not the webhook's to inject; recorded: a Job's exit-code rules written into its Pod template) and reason class."}, []string{"outcome", "reason"}),
		duration: f.NewHistogramVec(prometheus.HistogramOpts{Name: "job_signal_webhook_admission_duration_seconds",
			Help:    "Time to answer an admission request, by outcome.",
			Buckets: latencyBuckets}, []string{"outcome"}),
		inFlight: f.NewGauge(prometheus.GaugeOpts{Name: "job_signal_webhook_requests_in_flight",
			Help: "Admission requests being answered now."}),
		bodyBytes: f.NewGauge(prometheus.GaugeOpts{Name: "job_signal_webhook_request_body_bytes",
			Help: "Bytes the webhook holds of admission requests' bodies, of the 5 MiB it holds at most; a body takes them as its bytes arrive."}),
		bodyTime: f.NewHistogram(prometheus.HistogramOpts{Name: "job_signal_webhook_request_body_seconds",
			Help:    "Time from an admission request's headers to the end of its body, for the bodies that arrived whole: the API server sends both in one write, and a body has 2 s.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2}}),
		bodiesCut: f.NewCounter(prometheus.CounterOpts{Name: "job_signal_webhook_request_bodies_cut_total",
			Help: "Request bodies cut, while they were read, for another request's room: each had sent no byte for 250 ms (a client that stalls), the largest first."}),
		lookups: f.NewHistogramVec(prometheus.HistogramOpts{Name: "job_signal_webhook_registry_lookups_seconds",
			Help:    "Image lookups in registries and how long they took, by result: cached (the cache answered, after the access check), fetched, or the class of the failure (timeout, network, server, busy, denied, notfound, toolarge, invalid).",
			Buckets: latencyBuckets}, []string{"result"}),
		forms: f.NewCounterVec(prometheus.CounterOpts{Name: "job_signal_webhook_injected_pods_total",
			Help: "Pods changed by the webhook, by the form they were given: pair (job-signal and sidecar-watch) or native (native sidecars), and the class of why (the log line and the Pod's record say why in a sentence)."}, []string{"form", "reason"}),
		checks: f.NewCounterVec(prometheus.CounterOpts{Name: "job_signal_webhook_cluster_checks_total",
			Help: "Checks of what the cluster offers, by result: ok or failed (the API server's version, asked every --detect-interval, or a failed list or watch of the Nodes; the last good answer is kept)."}, []string{"result"}),
		native: f.NewGaugeVec(prometheus.GaugeOpts{Name: "job_signal_webhook_native_sidecars",
			Help: "1 when the cluster has native sidecars everywhere (the API server and every Node's kubelet 1.33 or later), 0 when not, as last read; version is the API server's. No sample before the version and the Nodes are first read."}, []string{"version"}),
		heldBack: f.NewGauge(prometheus.GaugeOpts{Name: "job_signal_webhook_nodes_holding_back_native_sidecars",
			Help: "Nodes whose kubelet is older than 1.33 under an API server that is not, as last read: while more than 0, mode auto gives the pair (the webhook's log names each Node)."}),
		connections: f.NewCounter(prometheus.CounterOpts{Name: "job_signal_webhook_connections_total",
			Help: "Connections accepted on the HTTPS listener: each one a TLS handshake."}),
		open: f.NewGaugeVec(prometheus.GaugeOpts{Name: "job_signal_webhook_connections",
			Help: "Connections open on the HTTPS listener, by state: waiting (in the TLS handshake or before the first request's headers), active (answering a request), idle (kept alive between requests)."}, []string{"state"}),
		dropped: f.NewCounterVec(prometheus.CounterOpts{Name: "job_signal_webhook_connections_dropped_total",
			Help: "Connections the webhook closed to stay within its bound on waiting or idle ones (256 each), by the state they were in: the oldest goes."}, []string{"state"}),
		expiry: f.NewGauge(prometheus.GaugeOpts{Name: "job_signal_webhook_certificate_expiration_timestamp_seconds",
			Help: "When the serving certificate this replica presents expires, in seconds since the epoch, whatever its source. Alert well before: (this - time()) < 30 days is when the webhook warns."}),
		certSteps: f.NewCounterVec(prometheus.CounterOpts{Name: "job_signal_webhook_certificate_steps_total",
			Help: "Changes this replica made to the certificate it manages (--certificate-secret), by step: issue (none could be served), stage (the next one, its CA added to the bundle), switch (the next one served), prune (a CA no longer needed left the bundle), ca_bundle (a webhook configuration's caBundle set)."}, []string{"step"}),
		certFails: f.NewCounter(prometheus.CounterOpts{Name: "job_signal_webhook_certificate_failures_total",
			Help: "Passes of the loop that manages the certificate (--certificate-secret) that failed (the API server unreachable, a right missing); the reason is logged."}),
	}
	for _, s := range []string{"waiting", "active", "idle"} {
		m.open.WithLabelValues(s) // shown at 0 before the first connection
		if s != "active" {
			m.dropped.WithLabelValues(s)
		}
	}
	for _, form := range []string{"pair", "native"} {
		m.forms.WithLabelValues(form, formUnclassified) // shown at 0 before the first Pod
	}
	for _, s := range []string{"issue", "stage", "switch", "prune", "ca_bundle"} { // the step label's values
		m.certSteps.WithLabelValues(s)
	}
	return m
}

// Handler serves the metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

func (m *Metrics) admitted(o outcome, reason string, elapsed time.Duration) {
	m.admissions.WithLabelValues(string(o), reason).Inc()
	m.duration.WithLabelValues(string(o)).Observe(elapsed.Seconds())
}

// injectedForm counts one Pod changed, by its form and the class of why.
func (m *Metrics) injectedForm(f inject.Form, class string) {
	m.forms.WithLabelValues(string(f), class).Inc()
}

// clusterCheck counts one check of the cluster.
func (m *Metrics) clusterCheck(ok bool) {
	m.checks.WithLabelValues(map[bool]string{true: "ok", false: "failed"}[ok]).Inc()
}

// maxVersionLabel bounds the version label: the API server's text.
const maxVersionLabel = 64

// setCluster shows a good answer of a check: one sample, of its version.
func (m *Metrics) setCluster(cl inject.Cluster) {
	m.native.Reset()
	v := 0.0
	if cl.NativeSidecars {
		v = 1
	}
	m.native.WithLabelValues(inject.OneLine(cl.Version, maxVersionLabel)).Set(v)
	m.heldBack.Set(float64(cl.HeldBack))
}

// Lookup counts one image lookup (resolve.Resolver's OnLookup).
func (m *Metrics) Lookup(result string, elapsed time.Duration) {
	m.lookups.WithLabelValues(result).Observe(elapsed.Seconds())
}

// certificateStep counts one change to the managed certificate.
func (m *Metrics) certificateStep(step string) { m.certSteps.WithLabelValues(step).Inc() }

// certificateFailure counts one failed pass of the managed certificate's loop.
func (m *Metrics) certificateFailure() { m.certFails.Inc() }
