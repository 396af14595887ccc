package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/agent"
	"github.com/lumen-home/lumen/messages"
)

// The prompt shows the light's current model, and stays bounded however
// big the light gets.
func TestPromptBounded(t *testing.T) {
	small := &messages.GetReply{State: "red", Brightness: 40, States: []messages.State{{Name: "off"}, {Name: "red", R: messages.Channel{Num: 255}}},
		Rules: []messages.Rule{{ID: "r1", From: "off", On: "button_click", To: "red", Condition: "getData('n') > 1", Priority: 5, Enabled: true}},
		Vars:  map[string]json.RawMessage{"n": json.RawMessage("3")}}
	p := agent.Prompt("kitchen", small)
	for _, want := range []string{`"kitchen"`, "Current state: red, brightness 40%.", "setColor(name, hex, kelvin or r g b", "r1: off → red on button_click if getData('n') > 1 (priority 5)", "n=3", "getPattern(name)", "counter, toggle, cycle"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
	big := &messages.GetReply{State: "s0", Vars: map[string]json.RawMessage{}}
	for i := 0; i < 2000; i++ {
		big.States = append(big.States, messages.State{Name: fmt.Sprintf("s%d", i), Description: strings.Repeat("x", 50)})
		big.Rules = append(big.Rules, messages.Rule{ID: fmt.Sprintf("r%d", i), From: "*", On: "tick", To: "s1", Enabled: true})
	}
	head := len(agent.Prompt("kitchen", nil))
	if n := len(agent.Prompt("kitchen", big)); n > head+7<<10 {
		t.Fatalf("prompt of a big light is %d bytes", n)
	}
	if !strings.Contains(agent.Prompt("kitchen", big), "use getStates, getRules, getVariables") {
		t.Fatal("a clipped prompt must say how to read the rest")
	}
}

// The prompt lists the light's functions with their parameters and
// descriptions, so that a later request reuses them.
func TestPromptListsFunctions(t *testing.T) {
	m := &messages.GetReply{State: "off", States: []messages.State{{Name: "off"}},
		Functions: []messages.Function{
			{Name: "is_evening", Description: "true after 18:00", Code: "return new Date(now()).getHours() >= 18;"},
			{Name: "mix", Params: []string{"a", "b"}, Code: "return (a + b) / 2;"}}}
	p := agent.Prompt("kitchen", m)
	for _, want := range []string{"2 functions", "Functions:\n- is_evening(): true after 18:00\n- mix(a, b)\n", "defineFunction(name, params, code, description?)"} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
	if p := agent.Prompt("kitchen", &messages.GetReply{State: "off"}); !strings.Contains(p, "Functions: none") {
		t.Errorf("prompt of a light without functions:\n%s", p)
	}
}

// defineFunction needs no approval (a function reaches nothing a rule
// cannot); deleting one does, as the other deletes do. Both go to the
// light's verbs.
func TestFunctionTools(t *testing.T) {
	tools := &agent.Tools{Light: newFakeLight()}
	for name, want := range map[string]string{agent.ToolDefineFunction: messages.TierAutonomous, agent.ToolDeleteFunction: messages.TierConfirm} {
		if tier := tools.Tier(context.Background(), name, json.RawMessage(`{"name":"f","code":"return 1"}`), nil); tier != want {
			t.Errorf("%s: tier %s, want %s", name, tier, want)
		}
	}
	light := newFakeLight()
	tools = &agent.Tools{Light: light}
	if _, err := tools.Run(context.Background(), agent.ToolDefineFunction, json.RawMessage(`{"name":"is_evening","params":[],"code":"return true"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := tools.Run(context.Background(), agent.ToolDeleteFunction, json.RawMessage(`{"name":"is_evening"}`)); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(light.cmds, "\n"); got != `define_function {"name":"is_evening","params":[],"code":"return true"}`+"\n"+`delete_function {"name":"is_evening"}` {
		t.Errorf("commands:\n%s", got)
	}
}
