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
	lookups    *prometheus.HistogramVec
	forms      *prometheus.CounterVec
	checks     *prometheus.CounterVec
	native     *prometheus.GaugeVec
	expiry     prometheus.Gauge
	certSteps  *prometheus.CounterVec
	certFails  prometheus.Counter
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
		expiry: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "job_signal_webhook_certificate_expiration_timestamp_seconds",
			Help: "When the serving certificate this replica presents expires, in seconds since the epoch, whatever its source. Alert well before: (this - time()) < 30 days is when the webhook warns.",
		}),
		certSteps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "job_signal_webhook_certificate_steps_total",
			Help: "Changes this replica made to the certificate it manages (--certificate-secret), by step: issue (none could be served), stage (the next one, its CA added to the bundle), switch (the next one served), prune (a CA no longer needed left the bundle), ca_bundle (a webhook configuration's caBundle set).",
		}, []string{"step"}),
		certFails: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "job_signal_webhook_certificate_failures_total",
			Help: "Passes of the loop that manages the certificate (--certificate-secret) that failed (the API server unreachable, a right missing); the reason is logged.",
		}),
	}
	for _, f := range []string{"pair", "native"} {
		m.forms.WithLabelValues(f) // shown at 0 before the first Pod
	}
	for _, s := range certificateSteps {
		m.certSteps.WithLabelValues(s)
	}
	m.registry.MustRegister(m.admissions, m.duration, m.inFlight, m.lookups, m.forms, m.checks, m.native, m.expiry, m.certSteps, m.certFails,
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

// servingExpiry shows when the served certificate expires.
func (m *Metrics) servingExpiry(notAfter time.Time) { m.expiry.Set(float64(notAfter.Unix())) }

// certificateSteps are the values of the step label.
var certificateSteps = []string{"issue", "stage", "switch", "prune", "ca_bundle"}

// certificateStep counts one change to the managed certificate.
func (m *Metrics) certificateStep(step string) { m.certSteps.WithLabelValues(step).Inc() }

// certificateFailure counts one failed pass of the managed certificate's loop.
func (m *Metrics) certificateFailure() { m.certFails.Inc() }
