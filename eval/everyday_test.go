package eval_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/agent"
	"github.com/lumen-home/lumen/agent/agenttest"
	"github.com/lumen-home/lumen/eval"
)

// The everyday suite without a model, over the tuning corpus: the
// daemon's own understanding carries out at least 95% of the everyday
// commands, judged by what the lights do, and takes none of those for
// the model (each refused, the lights left alone).
func TestEverydayLocal(t *testing.T) {
	e, err := eval.BuiltinEveryday()
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	results, err := eval.RunEveryday(context.Background(), e, eval.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(began)
	if len(results) != len(e.Cases) {
		t.Fatalf("%d results for %d cases", len(results), len(e.Cases))
	}
	for _, r := range results {
		if !r.Pass {
			t.Log(r)
		}
	}
	s := eval.SummarizeEveryday(results)
	if len(s) != 1 || s[0].Mode != eval.Local {
		t.Fatalf("summaries %+v, want one, local", s)
	}
	t.Logf("%s (%d sentences in %v)", s[0], len(results), took.Round(time.Millisecond))
	if s[0].Everyday < 400 || s[0].PassRate < 0.95 {
		t.Errorf("%d/%d everyday commands carried out; want at least 95%%", s[0].Passed, s[0].Everyday)
	}
	if s[0].Refused != s[0].ForModel {
		t.Errorf("%d of %d sentences for the model taken locally or changing the lights", s[0].ForModel-s[0].Refused, s[0].ForModel)
	}
}

// With a model, the everyday suite judges the model's tool calls by what
// the lights do: a call with a light argument that acts on the named
// lights passes, one on the wrong light fails with what changed; what
// the light understands itself never reaches the model; a sentence for
// the model is not judged.
func TestEverydayModel(t *testing.T) {
	const corpus = `
turn off the kitchen light => kitchen off
could the pendant go dark for me => kitchen off
give the upstairs a purple glow => group:upstairs color purple
the porch should be welcoming => porch state welcome
blink the kitchen twice => model
`
	e, err := eval.ParseEveryday("small.txt", []byte(corpus))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range e.Cases[1:4] {
		if r := mustHouse(t).Understand(c.Sentence); r.Outcome == agent.Understood {
			t.Fatalf("%q is understood locally; the test needs the model to take it", c.Sentence)
		}
	}
	calls := map[string]agenttest.Call{
		"could the pendant go dark for me": {Name: agent.ToolPower, Args: `{"on":false,"light":"kitchen"}`},
		"give the upstairs a purple glow":  {Name: agent.ToolSetColor, Args: `{"name":"purple","light":"group:upstairs"}`},
		// The mistake: the light spoken to, not the porch.
		"the porch should be welcoming": {Name: agent.ToolPower, Args: `{"on":false}`},
	}
	srv := agenttest.New(agenttest.Step{Repeat: true, Func: func(req agenttest.ChatRequest) agenttest.Step {
		last := -1
		for i, m := range req.Messages {
			if m.Role == "user" {
				last = i
			}
		}
		if last < 0 {
			return agenttest.Step{Content: "no request"}
		}
		if last < len(req.Messages)-1 {
			return agenttest.Step{Content: "Done."}
		}
		c, ok := calls[req.Messages[last].Text()]
		if !ok {
			return agenttest.Step{Content: "no script for " + req.Messages[last].Text()}
		}
		return agenttest.Step{Calls: []agenttest.Call{c}}
	}})
	defer srv.Close()
	cfg := config(srv)
	cfg.Dir = t.TempDir()
	results, err := eval.RunEveryday(context.Background(), e, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var model []eval.EverydayResult
	for _, r := range results {
		if r.Mode == "scripted" {
			model = append(model, r)
		}
	}
	if len(results) != 10 || len(model) != 5 {
		t.Fatalf("%d results, %d with the model; want 10 and 5", len(results), len(model))
	}
	for i, want := range []struct {
		pass, judged, asked bool
		got                 string
	}{
		{pass: true, judged: true},
		{pass: true, judged: true, asked: true},
		{pass: true, judged: true, asked: true},
		{judged: true, asked: true, got: "hall off"},
		{},
	} {
		r := model[i]
		if r.Pass != want.pass || r.Judged != want.judged || (r.Turns > 0) != want.asked || !strings.Contains(r.Got, want.got) {
			t.Errorf("%q: pass %v judged %v turns %d got %q; want pass %v judged %v asked %v got %q",
				r.Sentence, r.Pass, r.Judged, r.Turns, r.Got, want.pass, want.judged, want.asked, want.got)
		}
	}
	s := eval.SummarizeEveryday(results)
	if len(s) != 2 || s[0].Mode != eval.Local || s[1].Mode != "scripted" {
		t.Fatalf("summaries %+v", s)
	}
	// Without the model only the first is carried out; the rest are
	// refused, the model's sentence rightly.
	if s[0].Passed != 1 || s[0].Refused != 1 || s[1].Passed != 3 || s[1].Everyday != 4 || s[1].Asked != 3 || s[1].ForModel != 1 {
		t.Errorf("summaries:\n%s\n%s", s[0], s[1])
	}
	var report strings.Builder
	eval.WriteEveryday(&report, e.Name, results)
	t.Log("\n" + report.String())
	if !strings.Contains(report.String(), `FAIL scripted  line 5: "the porch should be welcoming" => porch state welcome`) {
		t.Errorf("the report lists no failure of the model's mistake")
	}
}

// mustHouse is the world the everyday corpora speak to.
func mustHouse(t *testing.T) *agent.World {
	t.Helper()
	saidTo, lights, err := agent.EverydayHouse()
	if err != nil {
		t.Fatal(err)
	}
	return agent.NewWorld(saidTo, lights)
}
