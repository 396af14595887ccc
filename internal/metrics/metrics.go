// Package metrics is the daemon's Prometheus metrics, served as GET
// /metrics on its HTTP port: one registry per daemon (never the global
// default one), the Go runtime's and the process's collectors, and what
// each light counts. The actors know none of it: each package declares
// the small meter it needs, and *Light is every one of them.
//
// Every metric of Lumen is named lumen_…; labels are the light's name,
// and the tool, data source, actor or request status where a metric says
// so: what exists, never what a request names.
package metrics

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/lumen-home/lumen/internal/clock"
)

// Config configures the metrics of one daemon.
type Config struct {
	// Journal reports the journal's size, asked at each scrape (nil: not
	// reported).
	Journal func(ctx context.Context) (bytes, msgs uint64, err error)
	// JournalTimeout bounds that question (default 2 s): a scrape never
	// hangs on a busy server.
	JournalTimeout time.Duration
	// Clock is the clock of the snapshots' ages (default the wall clock).
	Clock clock.Clock
	// Logf receives what could not be collected (nil: quiet).
	Logf func(format string, args ...any)
}

// Metrics are one daemon's.
type Metrics struct {
	cfg Config
	reg *prometheus.Registry

	inputs, outputs, turns, modelFailures *prometheus.CounterVec // by light
	apply, model                          *prometheus.HistogramVec
	restarts                              *prometheus.CounterVec // by light, actor
	toolCalls, toolFailures               *prometheus.CounterVec // by light, tool
	sourceRuns, sourceFailures            *prometheus.CounterVec // by light, source
	requests                              *prometheus.CounterVec // by light, status

	mu     sync.Mutex
	lights map[string]*Light
}

// Buckets of the histograms, in seconds: an input is applied in well
// under a millisecond and journaled with an fsync (milliseconds, more on
// an SD card); a model answers in a fraction of a second to a minute.
var (
	applyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}
	modelBuckets = []float64{.1, .25, .5, 1, 2.5, 5, 10, 20, 30, 60}
)

// New returns the metrics of a daemon, with the Go runtime's and the
// process's collectors (go_*, process_*) registered besides Lumen's.
func New(cfg Config) *Metrics {
	if cfg.Clock == nil {
		cfg.Clock = clock.System(clock.Trust)
	}
	if cfg.JournalTimeout <= 0 {
		cfg.JournalTimeout = 2 * time.Second
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	m := &Metrics{cfg: cfg, reg: prometheus.NewRegistry(), lights: map[string]*Light{},
		inputs:  counter("lumen_light_inputs_total", "Inputs the light applied.", "light"),
		outputs: counter("lumen_light_outputs_total", "Outputs the light journaled.", "light"),
		apply: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "lumen_light_apply_seconds",
			Help:    "Time from an input's delivery to the light until its outputs are on the journal.",
			Buckets: applyBuckets}, []string{"light"}),
		restarts:       counter("lumen_actor_restarts_total", "Restarts of a light's actors by their supervisor since the daemon started.", "light", "actor"),
		toolCalls:      counter("lumen_tool_calls_total", "Calls of a light's tool (defined, built-in or plugin).", "light", "tool"),
		toolFailures:   counter("lumen_tool_failures_total", "Calls of a light's tool that answered an error.", "light", "tool"),
		sourceRuns:     counter("lumen_source_runs_total", "Runs of a light's data source: polls, and messages of push sources.", "light", "source"),
		sourceFailures: counter("lumen_source_failures_total", "Runs of a light's data source that stored nothing.", "light", "source"),
		requests:       counter("lumen_agent_requests_total", "Requests to the light's agent, by how they ended.", "light", "status"),
		turns:          counter("lumen_agent_turns_total", "Replies of the model to the light's agent.", "light"),
		modelFailures:  counter("lumen_agent_model_failures_total", "Calls of the model that failed (error, timeout).", "light"),
		model: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "lumen_agent_model_seconds",
			Help:    "Time the model took to answer one turn of the light's agent, failures included.",
			Buckets: modelBuckets}, []string{"light"}),
	}
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.inputs, m.outputs, m.apply, m.restarts, m.toolCalls, m.toolFailures, m.sourceRuns, m.sourceFailures,
		m.requests, m.turns, m.modelFailures, m.model, snapshotAges{m})
	if cfg.Journal != nil {
		m.reg.MustRegister(journalSize{m})
	}
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Light returns the meter of light, made at its first call: its series
// start at zero, so a light that did nothing yet is listed.
func (m *Metrics) Light(name string) *Light {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l, ok := m.lights[name]; ok {
		return l
	}
	l := &Light{m: m, name: name,
		inputs: m.inputs.WithLabelValues(name), outputs: m.outputs.WithLabelValues(name), apply: m.apply.WithLabelValues(name),
		turns: m.turns.WithLabelValues(name), modelFailures: m.modelFailures.WithLabelValues(name), model: m.model.WithLabelValues(name)}
	m.lights[name] = l
	return l
}

// Restarted counts a restart of actor (its role: light, device, tools,
// sources, agent; or tool, source, session below them) of light.
func (m *Metrics) Restarted(light, actor string) { m.restarts.WithLabelValues(light, actor).Inc() }

// Light is what one light counts: the meter its state machine, tools,
// data sources and agent are given.
type Light struct {
	m    *Metrics
	name string

	inputs, outputs, turns, modelFailures prometheus.Counter
	apply, model                          prometheus.Observer
	snapshot                              atomic.Int64 // Unix ns of the last snapshot; 0: none
}

// Applied counts inputs applied together with the outputs they
// journaled; took is the time from their delivery until those outputs
// were durable, which each of them waited.
func (l *Light) Applied(inputs, outputs int, took time.Duration) {
	l.inputs.Add(float64(inputs))
	l.outputs.Add(float64(outputs))
	for range inputs {
		l.apply.Observe(took.Seconds())
	}
}

// Snapshotted records that the light saved a snapshot now.
func (l *Light) Snapshotted() { l.SnapshotAt(l.m.cfg.Clock.Now()) }

// SnapshotAt records the time of the light's last snapshot, e.g. one
// found at start-up.
func (l *Light) SnapshotAt(t time.Time) { l.snapshot.Store(t.UnixNano()) }

// ToolCall counts a call of the light's tool.
func (l *Light) ToolCall(tool string, failed bool) {
	l.m.toolCalls.WithLabelValues(l.name, tool).Inc()
	if failed {
		l.m.toolFailures.WithLabelValues(l.name, tool).Inc()
	}
}

// SourceRun counts a run of the light's data source.
func (l *Light) SourceRun(source string, failed bool) {
	l.m.sourceRuns.WithLabelValues(l.name, source).Inc()
	if failed {
		l.m.sourceFailures.WithLabelValues(l.name, source).Inc()
	}
}

// AgentRequest counts a request of the light's agent that ended with
// status (done, question, stopped, failed, cancelled).
func (l *Light) AgentRequest(status string) { l.m.requests.WithLabelValues(l.name, status).Inc() }

// ModelCall counts one turn's call of the model and how long it took.
func (l *Light) ModelCall(took time.Duration, failed bool) {
	l.model.Observe(took.Seconds())
	if failed {
		l.modelFailures.Inc()
	} else {
		l.turns.Inc()
	}
}

// Restarted counts a restart of the light's actor.
func (l *Light) Restarted(actor string) { l.m.Restarted(l.name, actor) }

// snapshotAges collects each light's snapshot age at scrape time; a
// light that never took one has none.
type snapshotAges struct{ m *Metrics }

var snapshotAgeDesc = prometheus.NewDesc("lumen_light_snapshot_age_seconds",
	"Time since the light's last snapshot (none before its first).", []string{"light"}, nil)

func (c snapshotAges) Describe(ch chan<- *prometheus.Desc) { ch <- snapshotAgeDesc }

func (c snapshotAges) Collect(ch chan<- prometheus.Metric) {
	now := c.m.cfg.Clock.Now()
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	for name, l := range c.m.lights {
		if ns := l.snapshot.Load(); ns != 0 {
			age := max(now.Sub(time.Unix(0, ns)).Seconds(), 0)
			ch <- prometheus.MustNewConstMetric(snapshotAgeDesc, prometheus.GaugeValue, age, name)
		}
	}
}

// journalSize asks the journal its size at each scrape: nothing polls it
// in between.
type journalSize struct{ m *Metrics }

var (
	journalBytesDesc = prometheus.NewDesc("lumen_journal_bytes", "Bytes stored in the journal (the LUMEN stream).", nil, nil)
	journalMsgsDesc  = prometheus.NewDesc("lumen_journal_messages", "Events stored in the journal (the LUMEN stream).", nil, nil)
)

func (c journalSize) Describe(ch chan<- *prometheus.Desc) {
	ch <- journalBytesDesc
	ch <- journalMsgsDesc
}

func (c journalSize) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.m.cfg.JournalTimeout)
	defer cancel()
	bytes, msgs, err := c.m.cfg.Journal(ctx)
	if err != nil {
		// The other metrics are still worth a scrape.
		c.m.cfg.Logf("metrics: journal size: %v", err)
		return
	}
	ch <- prometheus.MustNewConstMetric(journalBytesDesc, prometheus.GaugeValue, float64(bytes))
	ch <- prometheus.MustNewConstMetric(journalMsgsDesc, prometheus.GaugeValue, float64(msgs))
}
