package webhook

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
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
	}
	m.registry.MustRegister(m.admissions, m.duration, m.inFlight, m.lookups,
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

// Lookup counts one image lookup (resolve.Resolver's OnLookup).
func (m *Metrics) Lookup(result string, elapsed time.Duration) {
	m.lookups.WithLabelValues(result).Observe(elapsed.Seconds())
}
