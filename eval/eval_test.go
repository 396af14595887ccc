package eval_test

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/agent"
	"github.com/lumen-home/lumen/agent/agenttest"
	"github.com/lumen-home/lumen/eval"
	"github.com/lumen-home/lumen/internal/lumentest"
)

// turn is one scripted model reply: calls, or the words that end the
// request.
type turn struct {
	Say   string           `yaml:"say"`
	Calls []map[string]any `yaml:"calls"`
}

// script answers each case: per request, the turns in order.
type script map[string][][]turn

// fault replaces one turn of a script.
type fault struct {
	Ask  int `yaml:"ask"`
	Turn int `yaml:"turn"`
	turn `yaml:",inline"`
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

var apiURL = regexp.MustCompile(`http://127\.0\.0\.1:\d+`)

// scriptedModel is an OpenAI-compatible server that answers each case's
// requests from sc: it finds the case by the person's last request and
// answers the turn that comes next.
func scriptedModel(t *testing.T, suite eval.Suite, sc script) *agenttest.Server {
	t.Helper()
	type ask struct {
		name   string
		i      int
		prefix string
		suffix string
	}
	var asks []ask
	for _, c := range suite.Cases {
		for i, a := range c.Asks() {
			prefix, suffix, _ := strings.Cut(a, "{{api}}")
			asks = append(asks, ask{c.Name, i, prefix, suffix})
		}
	}
	return agenttest.New(agenttest.Step{Repeat: true, Func: func(req agenttest.ChatRequest) agenttest.Step {
		last := -1
		for i, m := range req.Messages {
			if m.Role == "user" {
				last = i
			}
		}
		if last < 0 {
			return agenttest.Step{Content: "no request"}
		}
		text := req.Messages[last].Text()
		n := 0
		for _, m := range req.Messages[last+1:] {
			if m.Role == "assistant" {
				n++
			}
		}
		for _, a := range asks {
			if text != a.prefix+a.suffix && !(strings.HasPrefix(text, a.prefix) && strings.HasSuffix(text, a.suffix) && strings.Contains(text, "http")) {
				continue
			}
			turns := sc[a.name]
			if a.i >= len(turns) || n >= len(turns[a.i]) {
				return agenttest.Step{Content: "the script has no more turns"}
			}
			api := apiURL.FindString(text)
			return reply(turns[a.i][n], api)
		}
		return agenttest.Step{Content: "no script for " + text}
	}})
}

func reply(tn turn, api string) agenttest.Step {
	if len(tn.Calls) == 0 {
		return agenttest.Step{Content: tn.Say}
	}
	var calls []agenttest.Call
	for _, c := range tn.Calls {
		for name, args := range c {
			b, _ := json.Marshal(args)
			s := strings.ReplaceAll(string(b), "{{api}}", api)
			s = strings.ReplaceAll(s, "{{host}}", strings.TrimPrefix(api, "http://"))
			calls = append(calls, agenttest.Call{Name: name, Args: s})
		}
	}
	return agenttest.Step{Calls: calls}
}

func config(srv *agenttest.Server) eval.Config {
	ac := daemon.DefaultConfig("").Agent
	ac.BaseURL = srv.URL + "/v1"
	ac.Timeout = 30 * time.Second
	return eval.Config{Agent: ac, Models: []string{"scripted"}, CaseTimeout: 2 * time.Minute, Settle: 5 * time.Second}
}

func builtin(t *testing.T) eval.Suite {
	t.Helper()
	s, err := eval.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A model that does everything right passes every case.
func TestPerfectModelPassesEveryCase(t *testing.T) {
	lumentest.NeedGuest(t)
	suite := builtin(t)
	var sc script
	readYAML(t, "testdata/perfect.yaml", &sc)
	srv := scriptedModel(t, suite, sc)
	defer srv.Close()
	cfg := config(srv)
	if only := os.Getenv("EVAL_ONLY"); only != "" {
		cfg.Only = strings.Split(only, ",")
	}
	// The first tool run compiles the engine, which may take a minute.
	cfg.Settle = time.Minute
	cfg.Finished = func(r eval.Result) { t.Log(r.Line()) }
	results, err := eval.Run(context.Background(), suite, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if !r.Pass {
			t.Errorf("%s failed: %s", r.Case, r.Failure)
		}
	}
}

// A model with one known mistake per case fails exactly that case: each
// case runs against a script where only its own turn is wrong.
func TestFaultyModelFailsEachCase(t *testing.T) {
	lumentest.NeedGuest(t)
	suite := builtin(t)
	var sc script
	readYAML(t, "testdata/perfect.yaml", &sc)
	var faults map[string]fault
	readYAML(t, "testdata/faulty.yaml", &faults)
	var cases []eval.Case
	for _, c := range suite.Cases {
		f, ok := faults[c.Name]
		switch {
		case c.Direct && ok:
			t.Errorf("%s: a direct command has no model to make a mistake", c.Name)
		case c.Direct:
		case !ok:
			t.Errorf("%s: no known mistake in testdata/faulty.yaml", c.Name)
		default:
			asks := slices.Clone(sc[c.Name])
			asks[f.Ask] = slices.Clone(asks[f.Ask])
			asks[f.Ask][f.Turn] = f.turn
			sc[c.Name] = asks
			cases = append(cases, c)
		}
	}
	srv := scriptedModel(t, suite, sc)
	defer srv.Close()
	cfg := config(srv)
	// A mistake shows at once; the perfect run proves the checks wait
	// long enough for what is right.
	cfg.Settle, cfg.Parallel = 2*time.Second, 4
	suite.Cases = cases
	results, err := eval.Run(context.Background(), suite, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if r.Pass {
			t.Errorf("%s passed with its mistake", r.Case)
		} else {
			t.Logf("%s: %s", r.Case, r.Failure)
		}
	}
}

// The light's direct-command matcher takes exactly the suite's direct
// commands for direct commands: none of the other requests (goal: no
// false positive), all of the direct ones.
func TestDirectCommandsOnTheSuite(t *testing.T) {
	for _, c := range builtin(t).Cases {
		for _, ask := range c.Asks() {
			if _, ok := agent.MatchLocal(ask, c.States()); ok != c.Direct {
				t.Errorf("%s: MatchLocal(%q, %v) = %v, want %v", c.Name, ask, c.States(), ok, c.Direct)
			}
		}
	}
}

// A model that cannot be used fails each case with what went wrong, and
// a case that takes too long fails when its time is up.
func TestBrokenModels(t *testing.T) {
	closed := agenttest.New()
	closed.Close()
	for _, tc := range []struct {
		name    string
		step    agenttest.Step
		url     string
		timeout time.Duration
		want    string
	}{
		{name: "garbage", step: agenttest.Step{Garbage: true, Repeat: true}, want: "the agent's answer is failed"},
		{name: "error", step: agenttest.Step{Status: 500, Repeat: true}, want: "the agent's answer is failed"},
		{name: "down", url: closed.URL + "/v1", want: "the agent's answer is failed"},
		{name: "hangs", step: agenttest.Step{Hang: true, Repeat: true}, timeout: 3 * time.Second, want: "the case took longer than 3s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := agenttest.New(tc.step)
			defer srv.Close()
			cfg := config(srv)
			if tc.url != "" {
				cfg.Agent.BaseURL = tc.url
			}
			if tc.timeout > 0 {
				cfg.CaseTimeout = tc.timeout
			}
			cfg.Only = []string{"toggle", "direct_next"}
			results, err := eval.Run(context.Background(), builtin(t), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(results) != 2 {
				t.Fatalf("%d results, want 2", len(results))
			}
			if r := results[0]; r.Pass || !strings.Contains(r.Failure, tc.want) {
				t.Errorf("toggle: pass %v, failure %q; want a failure with %q", r.Pass, r.Failure, tc.want)
			}
			// A direct command needs no model.
			if r := results[1]; !r.Pass || r.Turns != 0 {
				t.Errorf("direct_next: pass %v (%s), %d turns; want a pass without the model", r.Pass, r.Failure, r.Turns)
			}
		})
	}
}

func TestParseRefusesMistakes(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"no cases", "lights: {}", "no cases"},
		{"unknown key", "cases: [{name: a, steps: [{ask: hi, colour: red}]}]", "field colour not found"},
		{"no ask", "cases: [{name: a, steps: [{fire: button_click}]}]", "no step asks anything"},
		{"two actions", "cases: [{name: a, steps: [{ask: hi, fire: button_click}]}]", "more than one action"},
		{"bad want", "cases: [{name: a, steps: [{ask: hi, want: maybe}]}]", `want "maybe"`},
		{"want without ask", "cases: [{name: a, steps: [{ask: hi}, {fire: x, want: done}]}]", "go with an ask"},
		{"unknown light", "cases: [{name: a, light: den, steps: [{ask: hi}]}]", `light "den"`},
		{"bad light", "lights: {x: {rules: [{from: off, on: button_click, to: nowhere}]}}\ncases: [{name: a, light: x, steps: [{ask: hi}]}]", "light x"},
		{"bad color", "cases: [{name: a, steps: [{ask: hi, color: mauve}]}]", `color "mauve"`},
		{"bad click color", "cases: [{name: a, steps: [{ask: hi}, {clicks: [red, teal]}]}]", `color "teal"`},
		{"bad wait", "cases: [{name: a, steps: [{ask: hi}, {wait: soon}]}]", `wait "soon"`},
		{"twice", "cases: [{name: a, steps: [{ask: hi}]}, {name: a, steps: [{ask: ho}]}]", `case "a" is given twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := eval.Parse("x.yaml", []byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one with %q", err, tc.want)
			}
		})
	}
}

func TestClass(t *testing.T) {
	for _, tc := range []struct {
		r, g, b uint8
		class   string
		also    string // another class the color matches
	}{
		{0, 0, 0, "off", ""}, {10, 20, 5, "off", ""}, {255, 255, 255, "white", ""}, {200, 210, 220, "white", ""},
		{255, 0, 0, "red", ""}, {80, 0, 0, "red", ""}, {255, 0, 40, "red", ""},
		{255, 180, 100, "orange", "warm"}, {255, 140, 40, "orange", "warm"}, {255, 230, 60, "yellow", "warm"},
		{255, 235, 215, "white", "warm"}, {0, 255, 0, "green", ""}, {0, 255, 255, "cyan", ""},
		{0, 0, 255, "blue", ""}, {160, 0, 255, "purple", ""}, {255, 0, 255, "purple", ""},
	} {
		if got := eval.Class(tc.r, tc.g, tc.b); got != tc.class {
			t.Errorf("Class(%d,%d,%d) = %s, want %s", tc.r, tc.g, tc.b, got, tc.class)
		}
		if tc.also != "" && !eval.Matches(tc.also, tc.r, tc.g, tc.b) {
			t.Errorf("(%d,%d,%d) does not match %s", tc.r, tc.g, tc.b, tc.also)
		}
		if !eval.Matches("blue|"+tc.class, tc.r, tc.g, tc.b) {
			t.Errorf("(%d,%d,%d) does not match blue|%s", tc.r, tc.g, tc.b, tc.class)
		}
	}
	if eval.Matches("warm", 255, 255, 255) || eval.Matches("warm", 0, 0, 255) {
		t.Error("pure white or blue taken for warm")
	}
}
