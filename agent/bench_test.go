package agent_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/lumen-home/lumen/agent"
	"github.com/lumen-home/lumen/agent/agenttest"
)

// BenchmarkLoopTurn is the loop alone (in-memory light and journal) over
// real HTTP to the scripted model: compare with the daemon's
// BenchmarkAgentTurn in bench/ to see what NATS and the journal add.
func BenchmarkLoopTurn(b *testing.B) {
	var n atomic.Int64
	srv := agenttest.New(agenttest.Step{Repeat: true, Func: func(agenttest.ChatRequest) agenttest.Step {
		i := n.Add(1)
		if i%5 == 0 {
			return agenttest.Step{Calls: []agenttest.Call{{Name: "done", Args: `{"message":"ok"}`}}}
		}
		return agenttest.Step{Calls: []agenttest.Call{{Name: "getState", Args: fmt.Sprintf(`{"name":"off","n":%d}`, i)}}}
	}})
	defer srv.Close()
	light := newFakeLight()
	tools := &agent.Tools{Light: light}
	loop := &agent.Loop{Model: agent.NewOpenAI(agent.ModelConfig{BaseURL: srv.BaseURL(), Model: "scripted", MaxRetries: -1}), Tools: tools, Prompt: agent.LightPrompt("demo", tools)}
	for i := 0; i < b.N; i++ {
		env := &memEnv{s: agent.NewState("b")}
		if r := loop.Ask(context.Background(), env.s, env, "go", "bench"); r.Status != "done" {
			b.Fatalf("%+v", r)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*5), "µs/turn")
}
