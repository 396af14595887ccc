package metrics_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lumen-home/lumen/internal/clock/clocktest"
	"github.com/lumen-home/lumen/internal/metrics"
	"github.com/lumen-home/lumen/internal/metrics/metricstest"
)

// What the meters count is what a scrape of the handler shows, in the
// format Prometheus parses.
func TestMetrics(t *testing.T) {
	start := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	clk := clocktest.New(start)
	var journalErr atomic.Bool
	m := metrics.New(metrics.Config{
		Clock: clk,
		Journal: func(context.Context) (uint64, uint64, error) {
			if journalErr.Load() {
				return 0, 0, errors.New("no answer")
			}
			return 4096, 12, nil
		},
	})
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()

	kitchen := m.Light("kitchen")
	m.Light("hall")
	if m.Light("kitchen") != kitchen {
		t.Fatal("a second Light of the same name is another meter")
	}
	kitchen.Applied(3, 5, 2*time.Millisecond)
	kitchen.Applied(1, 0, time.Millisecond)
	kitchen.SnapshotAt(start.Add(-90 * time.Second))
	kitchen.ToolCall("get_time", false)
	kitchen.ToolCall("get_time", true)
	kitchen.ToolCall("price", false)
	kitchen.SourceRun("door", false)
	kitchen.SourceRun("door", true)
	kitchen.SourceRun("door", true)
	kitchen.AgentRequest("done")
	kitchen.AgentRequest("done")
	kitchen.AgentRequest("failed")
	kitchen.ModelCall(300*time.Millisecond, false)
	kitchen.ModelCall(2*time.Second, false)
	kitchen.ModelCall(60*time.Second, true)
	kitchen.Restarted("tool")
	m.Restarted("hall", "light")

	s := metricstest.Get(t, srv.URL, "", "")
	for _, tc := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"lumen_light_inputs_total", []string{"light", "kitchen"}, 4},
		{"lumen_light_outputs_total", []string{"light", "kitchen"}, 5},
		{"lumen_light_apply_seconds", []string{"light", "kitchen"}, 4}, // observations: one per input
		{"lumen_light_inputs_total", []string{"light", "hall"}, 0},     // listed before it does anything
		{"lumen_light_snapshot_age_seconds", []string{"light", "kitchen"}, 90},
		{"lumen_tool_calls_total", []string{"light", "kitchen", "tool", "get_time"}, 2},
		{"lumen_tool_failures_total", []string{"light", "kitchen", "tool", "get_time"}, 1},
		{"lumen_tool_calls_total", []string{"light", "kitchen", "tool", "price"}, 1},
		{"lumen_source_runs_total", []string{"light", "kitchen", "source", "door"}, 3},
		{"lumen_source_failures_total", []string{"light", "kitchen", "source", "door"}, 2},
		{"lumen_agent_requests_total", []string{"light", "kitchen", "status", "done"}, 2},
		{"lumen_agent_requests_total", []string{"light", "kitchen", "status", "failed"}, 1},
		{"lumen_agent_turns_total", []string{"light", "kitchen"}, 2},
		{"lumen_agent_model_failures_total", []string{"light", "kitchen"}, 1},
		{"lumen_agent_model_seconds", []string{"light", "kitchen"}, 3},
		{"lumen_actor_restarts_total", []string{"light", "kitchen", "actor", "tool"}, 1},
		{"lumen_actor_restarts_total", []string{"light", "hall", "actor", "light"}, 1},
		{"lumen_journal_bytes", nil, 4096},
		{"lumen_journal_messages", nil, 12},
	} {
		if got, ok := s.Value(tc.name, tc.labels...); !ok || got != tc.want {
			t.Errorf("%s%v = %v (found %v), want %v", tc.name, tc.labels, got, ok, tc.want)
		}
	}
	if _, ok := s.Value("lumen_light_snapshot_age_seconds", "light", "hall"); ok {
		t.Error("a light with no snapshot has a snapshot age")
	}
	if _, ok := s.Value("go_goroutines"); !ok {
		t.Error("no go_goroutines: the Go collector is not registered")
	}
	if h := s.Series("lumen_light_apply_seconds", "light", "kitchen").GetHistogram(); h.GetSampleSum() < 0.006 || h.GetSampleSum() > 0.0080001 {
		t.Errorf("apply seconds sum %v, want 3×2 ms + 1 ms", h.GetSampleSum())
	}
	for name := range s {
		if !strings.HasPrefix(name, "lumen_") && !strings.HasPrefix(name, "go_") && !strings.HasPrefix(name, "process_") {
			t.Errorf("metric %s is not named lumen_…", name)
		}
	}

	// The age grows with the clock; a new snapshot resets it.
	later := start.Add(time.Minute)
	clk.Set(later)
	s = metricstest.Get(t, srv.URL, "", "")
	if got, _ := s.Value("lumen_light_snapshot_age_seconds", "light", "kitchen"); got != 150 {
		t.Errorf("snapshot age a minute later: %v, want 150", got)
	}
	kitchen.Snapshotted()
	s = metricstest.Get(t, srv.URL, "", "")
	if got, _ := s.Value("lumen_light_snapshot_age_seconds", "light", "kitchen"); got != 0 {
		t.Errorf("snapshot age right after a snapshot: %v, want 0", got)
	}

	// A journal that does not answer leaves out its size, not the rest.
	journalErr.Store(true)
	s = metricstest.Get(t, srv.URL, "", "")
	if _, ok := s.Value("lumen_journal_bytes"); ok {
		t.Error("a journal size when the journal did not answer")
	}
	if got, _ := s.Value("lumen_light_inputs_total", "light", "kitchen"); got != 4 {
		t.Errorf("inputs when the journal did not answer: %v", got)
	}
}

// Two daemons in one process count apart: nothing is global.
func TestMetricsArePerDaemon(t *testing.T) {
	a, b := metrics.New(metrics.Config{}), metrics.New(metrics.Config{})
	a.Light("x").Applied(1, 1, time.Millisecond)
	b.Light("x") // registering the same names twice must not panic
	sa, sb := httptest.NewServer(a.Handler()), httptest.NewServer(b.Handler())
	defer sa.Close()
	defer sb.Close()
	if got, _ := metricstest.Get(t, sa.URL, "", "").Value("lumen_light_inputs_total", "light", "x"); got != 1 {
		t.Errorf("first daemon: %v inputs, want 1", got)
	}
	if got, _ := metricstest.Get(t, sb.URL, "", "").Value("lumen_light_inputs_total", "light", "x"); got != 0 {
		t.Errorf("second daemon: %v inputs, want 0", got)
	}
	if _, ok := metricstest.Get(t, sb.URL, "", "").Value("lumen_journal_bytes"); ok {
		t.Error("a journal size with no journal configured")
	}
}
