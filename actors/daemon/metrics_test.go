package daemon_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/agent/agenttest"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/internal/metrics/metricstest"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/wire"
)

// GET /metrics on the HTTP port: behind the same Host check and
// credentials as the API; it counts a light's inputs, its snapshots'
// age (also one taken before the daemon started), the journal, and the
// supervisor's restarts of a light's actor.
func TestMetricsDoor(t *testing.T) {
	data := t.TempDir()
	const user, password = "ann", "s3cret"
	start := func() (*daemon.Daemon, string) {
		d, base := startWeb(t, func(c *daemon.Config) {
			c.Data, c.User, c.Password, c.SnapshotEvery = data, user, password, 2
		})
		return d, base + "/metrics"
	}
	d, url := start()
	for _, tc := range []struct {
		name           string
		host           string
		user, password string
		status         int
	}{
		{"no credentials", "", "", "", http.StatusUnauthorized},
		{"a wrong password", "", user, "nope", http.StatusUnauthorized},
		{"a rebound name", "evil.example", user, password, http.StatusMisdirectedRequest},
		{"the credentials", "", user, password, http.StatusOK},
	} {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if tc.host != "" {
			req.Host = tc.host
		}
		if tc.user != "" {
			req.SetBasicAuth(tc.user, tc.password)
		}
		if status, b := post(t, req); status != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.name, status, b, tc.status)
		}
	}

	scrape := func() metricstest.Scrape { return metricstest.Get(t, url, user, password) }
	before := scrape()
	inputs := before.Must(t, "lumen_light_inputs_total", "light", "a")
	nc, err := nats.Connect(d.URL(), nats.UserInfo(user, password))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := wire.New(nc)
	ctx := context.Background()
	for range 3 {
		if err := c.Call(ctx, "a", messages.VerbFire, messages.FireRequest{Transition: "button_click"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	after := scrape()
	if got := after.Must(t, "lumen_light_inputs_total", "light", "a"); got != inputs+3 {
		t.Errorf("inputs of a after 3 clicks: %v, want %v", got, inputs+3)
	}
	if got := after.Must(t, "lumen_light_inputs_total", "light", "b"); got != before.Must(t, "lumen_light_inputs_total", "light", "b") {
		t.Errorf("b's inputs moved with a's clicks")
	}
	if got := after.Must(t, "lumen_light_outputs_total", "light", "a"); got < before.Must(t, "lumen_light_outputs_total", "light", "a")+3 {
		t.Errorf("outputs of a after 3 state changes: %v", got)
	}
	if got := after.Must(t, "lumen_light_apply_seconds", "light", "a"); got != inputs+3 {
		t.Errorf("apply latencies observed: %v, want one per input (%v)", got, inputs+3)
	}
	// A snapshot every 2 inputs: one was just taken.
	if age := after.Must(t, "lumen_light_snapshot_age_seconds", "light", "a"); age < 0 || age > 60 {
		t.Errorf("snapshot age of a: %v s", age)
	}
	if msgs := after.Must(t, "lumen_journal_messages"); msgs < 3 || after.Must(t, "lumen_journal_bytes") <= 0 {
		t.Errorf("journal: %v messages, %v bytes", msgs, after.Must(t, "lumen_journal_bytes"))
	}
	if _, ok := after.Value("lumen_actor_restarts_total", "light", "a"); ok {
		t.Errorf("a restart counted before any crash")
	}

	// The light's consumer deleted under it: the supervisor restarts it.
	if err := d.JetStream().DeleteConsumer(ctx, "LUMEN", "light-a"); err != nil {
		t.Fatal(err)
	}
	lumentest.WaitFor(t, 30*time.Second, "the restart to be counted", func() bool {
		v, _ := scrape().Value("lumen_actor_restarts_total", "light", "a", "actor", "light")
		return v == 1
	})

	// Another start on the same data: the snapshot taken before it has
	// its age before the light takes a new one, and the counters start
	// again.
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	_, url = start()
	s := scrape()
	if age, ok := s.Value("lumen_light_snapshot_age_seconds", "light", "b"); !ok || age < 0 || age > 600 {
		t.Errorf("after a restart, b's snapshot age: %v (found %v)", age, ok)
	}
	if _, ok := s.Value("lumen_actor_restarts_total", "light", "a"); ok {
		t.Errorf("restarts counted across a start of the daemon")
	}
}

// GET /metrics moves with what a person does beyond clicks (those are
// TestMetricsDoor's): tool calls and their failures, a data source's
// runs and failures, the agent's requests by how they ended, its turns
// and the model's latency; every metric is named lumen_… (or is Go's or
// the process's).
func TestMetricsScrape(t *testing.T) {
	srv := agenttest.New(
		agenttest.Step{Calls: []agenttest.Call{{Name: "setState", Args: `{"name":"blue"}`}}},
		agenttest.Step{Content: "It is blue now."},
		agenttest.Step{Status: 400}, // the model refuses the second request
	)
	defer srv.Close()
	d := startWith(t, func(c *daemon.Config) {
		c.HTTP, c.Agent.BaseURL, c.Agent.Model = "127.0.0.1:0", srv.BaseURL(), "scripted"
	}, "demo")
	url := d.WebhookURL() + "/metrics"
	nc := connectTo(t, d)
	scrape := func() metricstest.Scrape { return metricstest.Get(t, url, "", "") }

	s := scrape()
	if g := s.Must(t, "go_goroutines"); g <= 0 {
		t.Errorf("go_goroutines = %v", g)
	}
	inputs := s.Must(t, "lumen_light_inputs_total", "light", "demo")
	// A tool that answers, and one that fails.
	mustOK(t, nc, messages.VerbRunTool, `{"name":"get_time","args":{"tz":"Asia/Tokyo"}}`)
	if body, code := request(t, nc, messages.VerbRunTool, `{"name":"get_time","args":{"tz":"Nowhere/Atlantis"}}`); code != "400" {
		t.Fatalf("get_time of no time zone: %s %s", code, body)
	}
	// A data source: a message it stores, and one that lacks its path.
	mustOK(t, nc, messages.VerbCreateSource, `{"name":"door","type":"nats","subject":"home.doorbell","store":{"who":"result.who"}}`)
	lumentest.WaitFor(t, 20*time.Second, "the doorbell's message to be stored", func() bool {
		if err := nc.Publish("home.doorbell", []byte(`{"who":"Ann"}`)); err != nil {
			t.Fatal(err)
		}
		vars, _ := mustOK(t, nc, messages.VerbGet, `{}`)["vars"].(map[string]any)
		return vars["who"] == "Ann"
	})
	if err := nc.Publish("home.doorbell", []byte(`{"what":"no who"}`)); err != nil {
		t.Fatal(err)
	}
	// The agent: a request the model finishes in two turns, and one it
	// refuses.
	if r := mustOK(t, nc, messages.VerbAsk, `{"text":"something calm please"}`); r["status"] != "done" {
		t.Fatalf("first ask: %v", r)
	}
	if r := mustOK(t, nc, messages.VerbAsk, `{"text":"and now something else"}`); r["status"] != "failed" {
		t.Fatalf("second ask: %v", r)
	}

	lumentest.WaitFor(t, 20*time.Second, "the doorbell's failed run to be counted", func() bool {
		s = scrape()
		v, _ := s.Value("lumen_source_failures_total", "light", "demo", "source", "door")
		return v >= 1
	})
	// The source's definition and its stored run, the agent's setState:
	// at least 3 more inputs.
	if got := s.Must(t, "lumen_light_inputs_total", "light", "demo"); got < inputs+3 {
		t.Errorf("inputs: %v, want at least %v", got, inputs+3)
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
