package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/agent"
	"github.com/lumen-home/lumen/agent/agenttest"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
)

// turnsPerAsk is how many model replies one benchmarked ask takes: four
// tool turns, then done.
const turnsPerAsk = 5

// BenchmarkAgentTurn is one agent turn through the daemon against a
// zero-latency scripted model over real HTTP: the model call, journaling
// its reply and the call, running the tool against the light, the prompt's
// read of the light. Its baseline is BenchmarkScriptedModelCall (the bare
// openai-go call to the same server): the difference is the agent's
// overhead per turn.
func BenchmarkAgentTurn(b *testing.B) {
	for _, kind := range []string{"read", "write"} {
		b.Run(kind, func(b *testing.B) {
			var n atomic.Int64
			srv := agenttest.New(agenttest.Step{Repeat: true, Func: func(agenttest.ChatRequest) agenttest.Step {
				i := n.Add(1)
				if i%turnsPerAsk == 0 {
					return agenttest.Step{Calls: []agenttest.Call{{Name: "done", Args: `{"message":"ok"}`}}}
				}
				if kind == "read" {
					return agenttest.Step{Calls: []agenttest.Call{{Name: "getState", Args: fmt.Sprintf(`{"name":"off","n":%d}`, i)}}}
				}
				// A state change each turn: a create would replace a state an
				// earlier ask made, which waits for a person's approval.
				return agenttest.Step{Calls: []agenttest.Call{{Name: "setState", Args: fmt.Sprintf(`{"name":%q}`, []string{"red", "green", "blue"}[i%3])}}}
			}})
			defer srv.Close()
			d, err := lumentest.Launch(lumentest.Bin(b), b.TempDir(), "--light", benchLight, "--openai-base-url", srv.BaseURL(), "--model", "scripted", "--sync", syncMode())
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = d.Stop() }()
			nc, err := nats.Connect(d.URL)
			if err != nil {
				b.Fatal(err)
			}
			defer nc.Close()
			ask := func() {
				m, err := nc.Request("lumen."+benchLight+".cmd.ask", []byte(`{"text":"go"}`), requestTimeout)
				if err != nil {
					b.Fatal(err)
				}
				var r messages.AskReply
				if err := json.Unmarshal(m.Data, &r); err != nil || r.Status != "done" || r.Steps != turnsPerAsk {
					b.Fatalf("ask: %v %s", err, m.Data)
				}
			}
			ask() // warm up
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ask()
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*turnsPerAsk), "µs/turn")
			// The light's own share of a turn, in the same daemon: the
			// command the tool sends (and the prompt's get).
			cmd := func(verb, body string) float64 {
				start := time.Now()
				for i := 0; i < b.N; i++ {
					if _, err := nc.Request("lumen."+benchLight+".cmd."+verb, []byte(body), requestTimeout); err != nil {
						b.Fatal(err)
					}
				}
				return float64(time.Since(start).Microseconds()) / float64(b.N)
			}
			b.ReportMetric(cmd("get", `{}`), "get-µs")
			if kind == "write" {
				b.ReportMetric(cmd("set_state", `{"name":"red"}`), "set_state-µs")
			}
			if err := srv.Err(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkScriptedModelCall is the baseline of BenchmarkAgentTurn: one
// chat completion with the agent's tools and a prompt of the same size,
// openai-go to the scripted server, nothing else.
func BenchmarkScriptedModelCall(b *testing.B) {
	srv := agenttest.New(agenttest.Step{Repeat: true, Calls: []agenttest.Call{{Name: "getState", Args: `{"name":"off"}`}}})
	defer srv.Close()
	model := agent.NewOpenAI(agent.ModelConfig{BaseURL: srv.BaseURL(), Model: "scripted", MaxRetries: -1})
	req := agent.Request{System: agent.Prompt(benchLight, &messages.GetReply{State: "off", States: []messages.State{{Name: "off"}}}),
		Messages: []messages.AgentMessage{{Role: "user", Content: "go"}}, Tools: agent.Specs()}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for i := 0; i < b.N; i++ {
		if _, err := model.Complete(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/call")
}

// syncMode is the daemon's --sync for the agent benchmark: always, or
// $LUMEN_BENCH_SYNC to see the fsyncs' share.
func syncMode() string {
	if m := os.Getenv("LUMEN_BENCH_SYNC"); m != "" {
		return m
	}
	return "always"
}

// BenchmarkDirectCommand is `ask {"text":"on please"}` to a daemon with
// no model: a direct command, carried out by the agent's session with no
// model call (issue 18); and learned, an intent the light learned
// ("time to unwind" → set_state on), asked likewise. The baseline, in the
// same run and alternating with it, is the set_state command it makes:
// direct-vs-set_state is the ratio of their medians (goal ≤ 2), p50 the
// direct command's median (goal ≤ 20 ms with --sync batch).
func BenchmarkDirectCommand(b *testing.B) {
	for _, tc := range []struct{ name, text, learn string }{
		{"state", "on please", ""},
		{"learned", "Time to unwind!", `{"phrase":"time to unwind","verb":"set_state","arg":"on"}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			d := startDaemon(b, b.TempDir(), "--light", benchLight, "--model", "", "--sync", "batch")
			nc := connect(b, d.URL)
			applyBenchConfig(b, nc)
			timed := func(verb, body string) time.Duration {
				t0 := time.Now()
				m, err := nc.Request("lumen."+benchLight+".cmd."+verb, []byte(body), requestTimeout)
				if err != nil {
					b.Fatal(err)
				}
				if !json.Valid(m.Data) || m.Header.Get("Nats-Service-Error-Code") != "" {
					b.Fatalf("%s: %s", verb, m.Data)
				}
				return time.Since(t0)
			}
			if tc.learn != "" {
				timed("learn_intent", tc.learn)
			}
			ask, _ := json.Marshal(map[string]string{"text": tc.text})
			var direct, plain []time.Duration
			b.ResetTimer()
			for b.Loop() {
				direct = append(direct, timed("ask", string(ask)))
				b.StopTimer()
				plain = append(plain, timed("set_state", `{"name":"on"}`))
				b.StartTimer()
			}
			b.StopTimer()
			med := func(ds []time.Duration) time.Duration {
				s := append([]time.Duration(nil), ds...)
				slices.Sort(s)
				return s[len(s)/2]
			}
			b.ReportMetric(float64(med(direct).Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(med(plain).Microseconds())/1000, "set_state-p50-ms")
			b.ReportMetric(float64(med(direct))/float64(med(plain)), "direct-vs-set_state")
		})
	}
}
