package server

import (
	"context"
	"errors"
	"math"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/genlens/genlens/internal/service/monitorsvc"
	"github.com/genlens/genlens/internal/store/records"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics is the service's Prometheus registry: its own, never the
// global default, so that two Servers in one process (tests, replicas)
// do not collide and nothing registers itself behind our back.
type metrics struct {
	registry *prometheus.Registry
	latency  *prometheus.HistogramVec
	rows     *prometheus.CounterVec
	labels   *prometheus.CounterVec
	// QueueDepth is the number of jobs waiting in this replica's queue;
	// the job runner sets it.
	queueDepth prometheus.Gauge
	// Selections: picks per generator and current scores; the selection
	// handlers set them.
	selectionPicks *prometheus.GaugeVec
	selectionScore *prometheus.GaugeVec
	// Jobs and uploads the retention sweeps of this replica deleted.
	retentionDeleted *prometheus.CounterVec
	// The LLM proxy's requests, upstream latency and uncertainties.
	llmRequests    *prometheus.CounterVec
	llmUpstream    *prometheus.HistogramVec
	llmUncertainty *prometheus.HistogramVec
}

func newMetrics(s *Server) *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "genlens_http_request_duration_seconds",
			Help:    "Latency of HTTP requests by route pattern, method and status code.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route", "code"}),
		rows: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "genlens_rows_ingested_total",
			Help: "Rows stored by this replica, by monitor.",
		}, []string{"monitor"}),
		labels: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "genlens_labels_ingested_total",
			Help: "Labels (targets) stored by this replica, by monitor.",
		}, []string{"monitor"}),
		queueDepth: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "genlens_job_queue_depth",
			Help: "Jobs waiting to run in this replica's queue.",
		}),
		selectionPicks: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "genlens_selection_picks",
			Help: "Samples drawn from each generator of an online selection.",
		}, []string{"selection", "generator"}),
		selectionScore: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "genlens_selection_score",
			Help: "Current optimistic score of each generator of an online selection.",
		}, []string{"selection", "generator"}),
	}
	m.retentionDeleted = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "genlens_retention_deleted_total",
		Help: "Jobs (with their artifacts) and uploads deleted by this replica's retention sweeps, by kind (job, upload).",
	}, []string{"kind"})
	for _, kind := range []string{"job", "upload"} {
		m.retentionDeleted.WithLabelValues(kind) // exported as 0 before the first deletion
	}
	m.registry.MustRegister(m.retentionDeleted)
	m.llmRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "genlens_llm_requests_total",
		Help: "Chat completions proxied to the LLM upstream, by model and the status returned.",
	}, []string{"model", "code"})
	m.llmUpstream = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "genlens_llm_upstream_seconds",
		Help:    "Time the LLM upstream took to answer a proxied request (a stream: until its end), by model.",
		Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120},
	}, []string{"model"})
	m.llmUncertainty = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "genlens_llm_uncertainty",
		Help: "Uncertainty of proxied answers from the samples drawn beside them, by model (kernel entropy lies in [-1, 0]).",
		// Kernel entropy in tenths of [-1, 0]; degree lies in [0, 1],
		// KLE in [0, log k], EigV in [0, k].
		Buckets: []float64{-1, -.9, -.8, -.7, -.6, -.5, -.4, -.3, -.2, -.1, 0, .25, .5, .75, 1, 2, 5, 10, 20, 50},
	}, []string{"model"})
	m.registry.MustRegister(m.llmRequests, m.llmUpstream, m.llmUncertainty)
	m.registry.MustRegister(m.latency, m.rows, m.labels, m.queueDepth, m.selectionPicks, m.selectionScore,
		&monitorCollector{s: s},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError, Timeout: 20 * time.Second})
}

// statusWriter records the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// instrument times every request under its route pattern (set by the
// mux that served it; the raw path would make one series per id).
func (s *Server) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			// A panic in a handler is a bug: log it with its stack and
			// answer 500 rather than drop the connection (net/http's
			// default). http.ErrAbortHandler keeps its meaning.
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("handler panic", "method", r.Method, "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
				if sw.code == 0 {
					s.writeJSON(sw, http.StatusInternalServerError, errorBody{Error: "internal error (logged by the server)", Kind: "internal"})
				}
				s.metrics.latency.WithLabelValues("panic", "500").Observe(time.Since(start).Seconds())
			}
		}()
		next.ServeHTTP(sw, r)
		route := r.Pattern
		if route == "" || sw.code == http.StatusUnauthorized {
			route = "other"
		}
		if sw.code == 0 {
			sw.code = http.StatusOK
		}
		s.metrics.latency.WithLabelValues(route, strconv.Itoa(sw.code)).Observe(time.Since(start).Seconds())
	})
}

// monitorCollector reads every monitor's latest chunks from the store at
// scrape time, so that each replica reports the same values whichever
// one ingested the rows.
//
// A monitor whose series cannot be computed (its stored check model does
// not decode, or reading its chunks failed) is skipped, marked by
// genlens_monitor_unreadable and logged, rather than sent as an invalid
// metric: the scrape stays whole and says which monitor is missing. A
// stored model that does not decode is logged once per monitor (it
// fails every scrape alike), a store error at most once a minute.
type monitorCollector struct {
	s          *Server
	logged     sync.Map     // modelKey of the monitors whose model error was logged
	storeWarn  atomic.Int64 // Unix nanoseconds of the last store error logged
	storeWarns atomic.Int64 // store errors not logged since
}

var (
	descEstimated = prometheus.NewDesc("genlens_monitor_estimated_mse", "Estimated MSE of the monitor's latest complete chunk (one-step check model).", []string{"monitor"}, nil)
	descLower     = prometheus.NewDesc("genlens_monitor_estimated_mse_lower", "Lower end of the latest complete chunk's sampling band, the estimate minus 3 standard errors (se_lower in the chunk JSON; the interval that decides the alert is genlens_monitor_estimate_interval_lower).", []string{"monitor"}, nil)
	descUpper     = prometheus.NewDesc("genlens_monitor_estimated_mse_upper", "Upper end of the latest complete chunk's sampling band, the estimate plus 3 standard errors (se_upper in the chunk JSON).", []string{"monitor"}, nil)
	descAlert     = prometheus.NewDesc("genlens_monitor_alert", "1 when the latest complete chunk alerts: its MSE interval lies wholly beyond the reference thresholds, or reaches above the upper one while extrapolating (without a calibrated interval, its estimate lies outside them).", []string{"monitor"}, nil)
	descRealized  = prometheus.NewDesc("genlens_monitor_realized_mse", "Realised MSE over the latest complete chunk's labelled rows (absent until labels arrive).", []string{"monitor"}, nil)
	descThLower   = prometheus.NewDesc("genlens_monitor_threshold_lower", "Lower alert threshold from the model's reference data.", []string{"monitor"}, nil)
	descThUpper   = prometheus.NewDesc("genlens_monitor_threshold_upper", "Upper alert threshold from the model's reference data.", []string{"monitor"}, nil)
	descRows      = prometheus.NewDesc("genlens_monitor_rows", "Rows stored for the monitor.", []string{"monitor"}, nil)
	descChunks    = prometheus.NewDesc("genlens_monitor_chunks", "Chunks of the monitor, the incomplete last one included.", []string{"monitor"}, nil)
	descIndex     = prometheus.NewDesc("genlens_monitor_chunk_index", "0-based index of the latest complete chunk, which the monitor's chunk metrics describe.", []string{"monitor"}, nil)
	descEnd       = prometheus.NewDesc("genlens_monitor_chunk_end_time_seconds", "Timestamp of the latest complete chunk's last row (Unix seconds; absent when rows carry no timestamp).", []string{"monitor"}, nil)
	descRecent    = prometheus.NewDesc("genlens_monitor_recent_chunks", "Latest complete chunks (at most 10) counted by genlens_monitor_recent_alerts.", []string{"monitor"}, nil)
	descRecentAl  = prometheus.NewDesc("genlens_monitor_recent_alerts", "How many of the latest complete chunks (genlens_monitor_recent_chunks) alerted.", []string{"monitor"}, nil)
	descIncRows   = prometheus.NewDesc("genlens_monitor_incomplete_rows", "Rows of the incomplete chunk still filling (0 when the last chunk is complete).", []string{"monitor"}, nil)
	descIncEst    = prometheus.NewDesc("genlens_monitor_incomplete_estimated_mse", "Estimated MSE of the incomplete chunk so far (absent when there is none).", []string{"monitor"}, nil)
	descOutOfRef  = prometheus.NewDesc("genlens_monitor_out_of_reference", "Fraction of the latest complete chunk's rows with a feature outside its reference range.", []string{"monitor"}, nil)
	descExtrap    = prometheus.NewDesc("genlens_monitor_extrapolating", "1 when the latest complete chunk's estimate is an extrapolation (out_of_reference above its limit).", []string{"monitor"}, nil)
	descRecon     = prometheus.NewDesc("genlens_monitor_reconstruction_error", "Mean data reconstruction error (multivariate drift) of the latest complete chunk.", []string{"monitor"}, nil)
	descDriftAl   = prometheus.NewDesc("genlens_monitor_drift_alert", "1 when the latest complete chunk's inputs drifted: its reconstruction error lies outside its reference thresholds or genlens_monitor_ks_drift_alert is 1.", []string{"monitor"}, nil)
	descThin      = prometheus.NewDesc("genlens_monitor_thin_support_ratio", "Fraction of the latest complete chunk's rows in thin support of the reference (k-nearest-neighbour density in the check model's standardised features).", []string{"monitor"}, nil)
	descThinLim   = prometheus.NewDesc("genlens_monitor_thin_support_limit", "Fraction of rows in thin support above which the latest complete chunk is extrapolating (calibrated so that chunks like the reference exceed it about 1% of the time).", []string{"monitor"}, nil)
	descIvLower   = prometheus.NewDesc("genlens_monitor_estimate_interval_lower", "Lower end of the 90% interval of the latest complete chunk's MSE (calibrated on held-out reference estimates, wider in thin support; the band for a model fitted before).", []string{"monitor"}, nil)
	descIvUpper   = prometheus.NewDesc("genlens_monitor_estimate_interval_upper", "Upper end of the 90% interval of the latest complete chunk's MSE.", []string{"monitor"}, nil)
	descKSAl      = prometheus.NewDesc("genlens_monitor_ks_drift_alert", "1 when a feature's Kolmogorov-Smirnov test of the latest complete chunk against the reference rejects at 1% after the Bonferroni correction.", []string{"monitor"}, nil)
	descUnread    = prometheus.NewDesc("genlens_monitor_unreadable", "1 when the monitor's series could not be computed at this scrape (its stored check model does not decode, or the store failed reading its chunks; the log says which) and are absent, 0 otherwise.", []string{"monitor"}, nil)
)

// monitorDescs are the monitor collector's metrics.
var monitorDescs = []*prometheus.Desc{descEstimated, descLower, descUpper, descAlert, descRealized, descThLower, descThUpper, descRows, descChunks,
	descIndex, descEnd, descRecent, descRecentAl, descIncRows, descIncEst, descOutOfRef, descExtrap, descRecon, descDriftAl, descThin, descThinLim, descIvLower, descIvUpper, descKSAl, descUnread}

func (c *monitorCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range monitorDescs {
		ch <- d
	}
}

func (c *monitorCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	mons, err := c.s.monitors.Monitors(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(descEstimated, err)
		return
	}
	for _, m := range mons {
		// The latest chunks only: a chunk-size monitor reads just their
		// rows, however many it holds (every replica serves every scrape).
		v, err := c.s.monitors.Chunks(ctx, m, monitorsvc.RecentChunks+1, monitorsvc.RecentChunks+1)
		if err != nil {
			c.logUnreadable(m, err)
			ch <- prometheus.MustNewConstMetric(descUnread, prometheus.GaugeValue, 1, m.Name)
			continue
		}
		ch <- prometheus.MustNewConstMetric(descUnread, prometheus.GaugeValue, 0, m.Name)
		gauge := func(d *prometheus.Desc, x float64) {
			if !math.IsNaN(x) && !math.IsInf(x, 0) {
				ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, x, m.Name)
			}
		}
		flag := func(d *prometheus.Desc, b bool) {
			if b {
				gauge(d, 1)
			} else {
				gauge(d, 0)
			}
		}
		gauge(descRows, float64(v.Rows))
		gauge(descThLower, v.Th.Lower)
		gauge(descThUpper, v.Th.Upper)
		if len(v.Chunks) == 0 {
			continue
		}
		gauge(descChunks, float64(v.Total))
		sum := v.Summary()
		gauge(descRecent, float64(sum.Recent))
		gauge(descRecentAl, float64(sum.RecentAlerts))
		if inc := sum.Incomplete; inc != nil {
			gauge(descIncRows, float64(inc.Rows()))
			gauge(descIncEst, inc.Estimate)
		} else {
			gauge(descIncRows, 0)
		}
		last := sum.Latest
		if last == nil {
			continue
		}
		gauge(descIndex, float64(last.Index))
		if !last.To.IsZero() {
			gauge(descEnd, float64(last.To.UnixNano())/1e9)
		}
		gauge(descEstimated, last.Estimate)
		gauge(descLower, last.Lower)
		gauge(descUpper, last.Upper)
		gauge(descRealized, last.Realized)
		gauge(descIvLower, last.EstimateLower)
		gauge(descIvUpper, last.EstimateUpper)
		flag(descAlert, last.Alert)
		if d := last.Drift; d != nil {
			gauge(descOutOfRef, d.OutOfReference)
			flag(descExtrap, d.Extrapolating)
			gauge(descRecon, d.ReconstructionError)
			flag(descDriftAl, d.DriftAlert)
			gauge(descThin, d.ThinSupport)
			gauge(descThinLim, d.ThinLimit)
			flag(descKSAl, d.KSAlert)
		}
	}
}

// logUnreadable logs why monitor m's series are absent from this scrape:
// a stored model that does not decode once per monitor, a store error at
// most once a minute (with the count of those not logged since).
func (c *monitorCollector) logUnreadable(m records.Monitor, err error) {
	if errors.Is(err, monitorsvc.ErrStoredModel) {
		if _, seen := c.logged.LoadOrStore(monitorsvc.KeyOf(&m), struct{}{}); !seen {
			c.s.log.Error("metrics: monitor skipped: its stored check model does not decode", "monitor", m.Name, "id", m.ID, "err", err)
		}
		return
	}
	now := time.Now().UnixNano()
	last := c.storeWarn.Load()
	if now-last < int64(time.Minute) || !c.storeWarn.CompareAndSwap(last, now) {
		c.storeWarns.Add(1)
		return
	}
	c.s.log.Error("metrics: monitor skipped: reading its chunks failed", "monitor", m.Name, "id", m.ID, "err", err,
		"errors_not_logged_since", c.storeWarns.Swap(0))
}
