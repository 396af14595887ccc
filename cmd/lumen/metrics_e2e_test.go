package main_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/agent/agenttest"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/internal/metrics/metricstest"
)

// GET /metrics of `lumen up`, read as Prometheus reads it, moves with
// what a person does: clicks are the light's inputs (each with its apply
// latency) and grow the journal, tool calls and their failures, a data
// source's runs and failures, the agent's requests by how they ended,
// its turns and the model's latency.
func TestMetricsScrape(t *testing.T) {
	t.Parallel()
	srv := agenttest.New(
		agenttest.Step{Calls: []agenttest.Call{scripted("setState", `{"name":"blue"}`)}},
		agenttest.Step{Content: "It is blue now."},
		agenttest.Step{Status: 400}, // the model refuses the second request
	)
	defer srv.Close()
	d := startDaemon(t, t.TempDir(), agentArgs(srv, "--http", "127.0.0.1:0")...)
	url := strings.TrimSuffix(d.Page(t), "/") + "/metrics"
	nc := connect(t, d.URL)
	scrape := func() metricstest.Scrape { return metricstest.Get(t, url, "", "") }

	s := scrape()
	if g := s.Must(t, "go_goroutines"); g <= 0 {
		t.Errorf("go_goroutines = %v", g)
	}
	inputs := s.Must(t, "lumen_light_inputs_total", "light", "demo")
	for range 3 {
		mustOK(t, request(t, nc, "lumen.demo.cmd.fire", `{"transition":"button_click"}`))
	}
	// A tool that answers, and one that fails.
	mustOK(t, runTool(t, nc, "get_time", `{"tz":"Asia/Tokyo"}`))
	if r := runTool(t, nc, "get_time", `{"tz":"Nowhere/Atlantis"}`); r.Code != "400" {
		t.Fatalf("get_time of no time zone: %s %s", r.Code, r.Raw)
	}
	// A data source: a message it stores, and one that lacks its path.
	mustOK(t, request(t, nc, "lumen.demo.cmd.create_source", `{"name":"door","type":"nats","subject":"home.doorbell","store":{"who":"result.who"}}`))
	lumentest.WaitFor(t, 20*time.Second, "the doorbell's message to be stored", func() bool {
		if err := nc.Publish("home.doorbell", []byte(`{"who":"Ann"}`)); err != nil {
			t.Fatal(err)
		}
		vars, _ := mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Body["vars"].(map[string]any)
		return vars["who"] == "Ann"
	})
	if err := nc.Publish("home.doorbell", []byte(`{"what":"no who"}`)); err != nil {
		t.Fatal(err)
	}
	// The agent: a request the model finishes in two turns, and one it
	// refuses.
	if r := mustOK(t, request(t, nc, "lumen.demo.cmd.ask", `{"text":"something calm please"}`)); r.Body["status"] != "done" {
		t.Fatalf("first ask: %s", r.Raw)
	}
	if r := mustOK(t, request(t, nc, "lumen.demo.cmd.ask", `{"text":"and now something else"}`)); r.Body["status"] != "failed" {
		t.Fatalf("second ask: %s", r.Raw)
	}

	lumentest.WaitFor(t, 20*time.Second, "the doorbell's failed run to be counted", func() bool {
		s = scrape()
		v, _ := s.Value("lumen_source_failures_total", "light", "demo", "source", "door")
		return v >= 1
	})
	// 3 clicks, the source's definition and its stored run, the agent's
	// setState: at least 6 more inputs.
	if got := s.Must(t, "lumen_light_inputs_total", "light", "demo"); got < inputs+6 {
		t.Errorf("inputs: %v, want at least %v", got, inputs+6)
	}
	if n, in := s.Must(t, "lumen_light_apply_seconds", "light", "demo"), s.Must(t, "lumen_light_inputs_total", "light", "demo"); n != in {
		t.Errorf("apply latencies observed: %v, want one per input (%v)", n, in)
	}
	if got := s.Must(t, "lumen_light_outputs_total", "light", "demo"); got < 3 {
		t.Errorf("outputs: %v", got)
	}
	if got := s.Must(t, "lumen_journal_messages"); got < 10 {
		t.Errorf("journal messages: %v", got)
	}
	for _, tc := range []struct {
		name    string
		labels  []string
		want    float64
		atLeast bool
	}{
		{"lumen_tool_calls_total", []string{"light", "demo", "tool", "get_time"}, 2, false},
		{"lumen_tool_failures_total", []string{"light", "demo", "tool", "get_time"}, 1, false},
		// The first message may have been published more than once.
		{"lumen_source_runs_total", []string{"light", "demo", "source", "door"}, 2, true},
		{"lumen_source_failures_total", []string{"light", "demo", "source", "door"}, 1, false},
		{"lumen_agent_requests_total", []string{"light", "demo", "status", "done"}, 1, false},
		{"lumen_agent_requests_total", []string{"light", "demo", "status", "failed"}, 1, false},
		{"lumen_agent_turns_total", []string{"light", "demo"}, 2, false},
		{"lumen_agent_model_failures_total", []string{"light", "demo"}, 1, false},
		{"lumen_agent_model_seconds", []string{"light", "demo"}, 3, false}, // observations: every call
	} {
		if got := s.Must(t, tc.name, tc.labels...); got != tc.want && !(tc.atLeast && got > tc.want) {
			t.Errorf("%s%v = %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
	if h := s.Series("lumen_agent_model_seconds", "light", "demo").GetHistogram(); h.GetSampleSum() <= 0 {
		t.Errorf("the model's latency sums to %v s", h.GetSampleSum())
	}
	for name := range s {
		if !strings.HasPrefix(name, "lumen_") && !strings.HasPrefix(name, "go_") && !strings.HasPrefix(name, "process_") {
			t.Errorf("metric %s is not named lumen_…", name)
		}
	}
	if err := srv.Err(); err != nil {
		t.Fatal(err)
	}
}
