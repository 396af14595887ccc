package agent_test

import (
	"encoding/json"
	"testing"

	"github.com/lumen-home/lumen/agent"
	"github.com/lumen-home/lumen/agent/agenttest"
	"github.com/lumen-home/lumen/messages"
)

// What a request teaches: its words and its one change, a setState or a
// fire made on the model's own authority, reads aside.
func TestLearnedIntent(t *testing.T) {
	step := func(tool, args string, ok bool) messages.ToolStep {
		return messages.ToolStep{ID: "call_1_0", Tool: tool, Args: json.RawMessage(args), Tier: messages.TierAutonomous, OK: ok}
	}
	setReading := step(agent.ToolSetState, `{"name":"reading","speak_directly":true}`, true)
	tests := []struct {
		name   string
		ask    string
		status string
		calls  []messages.ToolStep
		want   string // phrase verb arg; "" when nothing is learned
	}{
		{"one setState", "I'm going to read a book", messages.AgentDone, []messages.ToolStep{setReading}, "i'm going read book set_state reading"},
		{"reads, then setState, then done", "Time to read, please", messages.AgentDone,
			[]messages.ToolStep{step(agent.ToolGetStates, `{}`, true), setReading, step(agent.ToolDone, `{"message":"Enjoy"}`, true)}, "time read set_state reading"},
		{"one fire", "party time", messages.AgentDone, []messages.ToolStep{step(agent.ToolFire, `{"transition":"party"}`, true)}, "party time fire party"},
		{"a change of configuration", "cosy", messages.AgentDone,
			[]messages.ToolStep{step(agent.ToolCreateState, `{"name":"cosy","r":1,"g":2,"b":3}`, true), step(agent.ToolSetState, `{"name":"cosy"}`, true)}, ""},
		{"two changes", "reading light", messages.AgentDone, []messages.ToolStep{setReading, step(agent.ToolFire, `{"transition":"party"}`, true)}, ""},
		{"a failed attempt first", "reading light", messages.AgentDone, []messages.ToolStep{step(agent.ToolSetState, `{"name":"read"}`, false), setReading}, ""},
		{"the change failed", "reading light", messages.AgentDone, []messages.ToolStep{step(agent.ToolSetState, `{"name":"read"}`, false)}, ""},
		{"nothing changed", "what is it", messages.AgentDone, []messages.ToolStep{step(agent.ToolGetStates, `{}`, true)}, ""},
		{"not done", "reading light", messages.AgentStopped, []messages.ToolStep{setReading}, ""},
		{"deictic words", "make it like that again", messages.AgentDone, []messages.ToolStep{setReading}, ""},
		{"a time", "reading for an hour", messages.AgentDone, []messages.ToolStep{setReading}, ""},
		{"a direct command", "reading", messages.AgentDone, []messages.ToolStep{{ID: "local_x", Tool: agent.ToolSetState, Args: json.RawMessage(`{"name":"reading"}`), Tier: messages.TierAutonomous, OK: true}}, ""},
		{"power off", "kill it", messages.AgentDone, []messages.ToolStep{step(agent.ToolPower, `{"on":false,"speak_directly":true}`, true)}, "kill power off"},
		{"toggle", "flip it over", messages.AgentDone, []messages.ToolStep{step(agent.ToolToggle, `{}`, true)}, "flip over toggle toggle"},
		{"a brightness step", "way too bright", messages.AgentDone, []messages.ToolStep{step(agent.ToolSetBrightness, `{"delta":-20}`, true)}, "way too bright set_brightness -20"},
		{"a brightness", "reading level", messages.AgentDone, []messages.ToolStep{step(agent.ToolSetBrightness, `{"percent":70}`, true)}, "reading level set_brightness 70"},
		{"a color by name", "like the sea", messages.AgentDone, []messages.ToolStep{step(agent.ToolSetColor, `{"name":"teal"}`, true)}, "like sea set_color teal"},
		{"a kelvin", "candle light", messages.AgentDone, []messages.ToolStep{step(agent.ToolSetColor, `{"kelvin":1900}`, true)}, "candle set_color 1900K"},
		{"a hex", "brand colors", messages.AgentDone, []messages.ToolStep{step(agent.ToolSetColor, `{"hex":"#ff8800"}`, true)}, "brand colors set_color #ff8800"},
		{"r g b is not kept", "brand colors", messages.AgentDone, []messages.ToolStep{step(agent.ToolSetColor, `{"r":1,"g":2,"b":3}`, true)}, ""},
		{"a fade is not kept", "sleepy", messages.AgentDone, []messages.ToolStep{step(agent.ToolPower, `{"on":false,"fade_ms":60000}`, true)}, ""},
		{"another light is not kept", "kitchen done", messages.AgentDone, []messages.ToolStep{step(agent.ToolPower, `{"on":false,"light":"kitchen"}`, true)}, ""},
		{"an approved call", "reading light", messages.AgentDone, []messages.ToolStep{{ID: "c", Tool: agent.ToolSetState, Args: json.RawMessage(`{"name":"reading"}`), Tier: messages.TierConfirm, OK: true, Approval: "default-3"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &agent.State{ID: "default", Status: tt.status, LastAsk: tt.ask, Calls: tt.calls}
			in, ok := agent.LearnedIntent(s)
			got := ""
			if ok {
				got = in.Phrase + " " + in.Verb + " " + in.Arg
			}
			if got != tt.want {
				t.Fatalf("learned %q, want %q", got, tt.want)
			}
		})
	}
}

// A request the model resolves into one setState is learned: the same
// words, said again, run locally with no model call. An answer to the
// model's question is not learned.
func TestLearnAndRunLocally(t *testing.T) {
	f := newFixture(t, agent.ModelConfig{},
		agenttest.Step{Calls: []agenttest.Call{call("setState", `{"name":"reading","speak_directly":true}`)}},
		agenttest.Step{Calls: []agenttest.Call{call("askUser", `{"question":"Which one?"}`)}},
		agenttest.Step{Calls: []agenttest.Call{call("setState", `{"name":"reading","speak_directly":true}`)}},
	)
	f.light.model.States = append(f.light.model.States, messages.State{Name: "reading"})
	if r := f.ask(t, "I'm going to read a book"); r.Status != messages.AgentDone || len(f.srv.Requests()) != 1 {
		t.Fatalf("first ask: %+v", r)
	}
	learned := f.light.commands(messages.VerbLearnIntent)
	if len(learned) != 1 || learned[0] != `learn_intent {"phrase":"i'm going read book","verb":"set_state","arg":"reading"}` {
		t.Fatalf("learn_intent sent %q", learned)
	}
	r := f.ask(t, "i'm GOING to read a book, please")
	if r.Status != messages.AgentDone || r.Answer != "The light is reading now." || len(f.srv.Requests()) != 1 {
		t.Fatalf("the learned phrase again: %+v after %d model calls", r, len(f.srv.Requests()))
	}
	if n := len(f.light.commands(messages.VerbSetState)); n != 2 {
		t.Fatalf("%d set_state, want 2", n)
	}
	if n := len(f.light.commands(messages.VerbLearnIntent)); n != 1 {
		t.Fatalf("a learned intent was learned again")
	}
	// A question, then its answer: what the answer means depends on it.
	if r := f.ask(t, "a light to read by"); r.Status != messages.AgentQuestion {
		t.Fatalf("question: %+v", r)
	}
	if r := f.ask(t, "the warm one"); r.Status != messages.AgentDone || len(f.srv.Requests()) != 3 {
		t.Fatalf("answer: %+v", r)
	}
	if n := len(f.light.commands(messages.VerbLearnIntent)); n != 1 {
		t.Fatalf("an answer to a question was learned: %q", f.light.commands(messages.VerbLearnIntent))
	}
	// With no model at all, a learned intent still runs.
	f.loop.Model = nil
	if r := f.ask(t, "I'm going to read a book"); r.Status != messages.AgentDone || r.Answer != "The light is reading now." {
		t.Fatalf("with no model: %+v", r)
	}
}

// A request the model answers with one everyday control is learned as
// one: the same words then dim the light with no model.
func TestLearnEverydayControl(t *testing.T) {
	f := newFixture(t, agent.ModelConfig{},
		agenttest.Step{Calls: []agenttest.Call{call("setBrightness", `{"delta":-20,"speak_directly":true}`)}},
	)
	if r := f.ask(t, "it's way too bright"); r.Status != messages.AgentDone || len(f.srv.Requests()) != 1 {
		t.Fatalf("first ask: %+v", r)
	}
	learned := f.light.commands(messages.VerbLearnIntent)
	if len(learned) != 1 || learned[0] != `learn_intent {"phrase":"it's way too bright","verb":"set_brightness","arg":"-20"}` {
		t.Fatalf("learn_intent sent %q", learned)
	}
	f.loop.Model = nil
	if r := f.ask(t, "It's WAY too bright!"); r.Status != messages.AgentDone || r.Answer != "I dimmed the light." {
		t.Fatalf("the learned phrase with no model: %+v", r)
	}
	if sent := f.light.commands(messages.VerbSetBrightness); len(sent) != 2 || sent[1] != `set_brightness {"delta":-20}` {
		t.Fatalf("set_brightness sent %q", sent)
	}
}
