package webhook

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
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
	// The HTTPS listener's connections (conns).
	connections prometheus.Counter
	open        *prometheus.GaugeVec
	dropped     *prometheus.CounterVec
}

// NewMetrics registers the webhook's metrics, and the Go runtime's and
// the process's, in a registry of their own.
func NewMetrics() *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		admissions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "job_signal_webhook_admissions_total",
			Help: "Pods reviewed, by outcome (injected, skipped: admitted without job-signal, denied: to be created again, unchanged: not the webhook's to inject) and reason class.",
		}, []string{"outcome", "reason"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "job_signal_webhook_admission_duration_seconds",
			Help:    "Time to answer an admission request, by outcome.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"outcome"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "job_signal_webhook_requests_in_flight",
			Help: "Admission requests being answered now.",
		}),
		bodyBytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "job_signal_webhook_request_body_bytes",
			Help: "Bytes the webhook holds of admission requests' bodies, of the 5 MiB it holds at most; a body takes them as its bytes arrive.",
		}),
		bodyTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "job_signal_webhook_request_body_seconds",
			Help:    "Time from an admission request's headers to the end of its body, for the bodies that arrived whole: the API server sends both in one write, and a body has 2 s.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2},
		}),
		bodiesCut: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "job_signal_webhook_request_bodies_cut_total",
			Help: "Request bodies cut, while they were read, for another request's room: each had sent no byte for 250 ms (a client that stalls), the largest first.",
		}),
		lookups: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "job_signal_webhook_registry_lookups_seconds",
			Help:    "Image lookups in registries and how long they took, by result: cached (the cache answered, after the access check), fetched, or the class of the failure (timeout, network, server, busy, denied, notfound, toolarge, invalid).",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"result"}),
		forms: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "job_signal_webhook_injected_pods_total",
			Help: "Pods changed by the webhook, by the form they were given: pair (job-signal and sidecar-watch) or native (native sidecars).",
		}, []string{"form"}),
		checks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "job_signal_webhook_cluster_checks_total",
			Help: "Checks of what the cluster offers (its version; whether its API server keeps native sidecars), by result: ok or failed (the last good answer is kept).",
		}, []string{"result"}),
		native: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "job_signal_webhook_native_sidecars",
			Help: "1 when the API server keeps native sidecars (an init container's restartPolicy Always), 0 when it drops them, as last checked; version is the Kubernetes version it reports. No sample before the first answer.",
		}, []string{"version"}),
		connections: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "job_signal_webhook_connections_total",
			Help: "Connections accepted on the HTTPS listener: each one a TLS handshake.",
		}),
		open: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "job_signal_webhook_connections",
			Help: "Connections open on the HTTPS listener, by state: waiting (in the TLS handshake or before the first request's headers), active (answering a request), idle (kept alive between requests).",
		}, []string{"state"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "job_signal_webhook_connections_dropped_total",
			Help: "Connections the webhook closed to stay within its bound on waiting or idle ones (256 each), by the state they were in: the oldest goes.",
		}, []string{"state"}),
	}
	for _, s := range []string{"waiting", "active", "idle"} {
		m.open.WithLabelValues(s) // shown at 0 before the first connection
		if s != "active" {
			m.dropped.WithLabelValues(s)
		}
	}
	for _, f := range []string{"pair", "native"} {
		m.forms.WithLabelValues(f) // shown at 0 before the first Pod
	}
	m.registry.MustRegister(m.admissions, m.duration, m.inFlight, m.bodyBytes, m.bodyTime, m.bodiesCut, m.lookups, m.forms, m.checks, m.native,
		m.connections, m.open, m.dropped,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
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

// injectedForm counts one Pod changed, by its form.
func (m *Metrics) injectedForm(f inject.Form) { m.forms.WithLabelValues(string(f)).Inc() }

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
}

// Lookup counts one image lookup (resolve.Resolver's OnLookup).
func (m *Metrics) Lookup(result string, elapsed time.Duration) {
	m.lookups.WithLabelValues(result).Observe(elapsed.Seconds())
}
