package agent_test

import (
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
	small := &messages.GetReply{State: "red", States: []messages.State{{Name: "off"}, {Name: "red", R: messages.Channel{Num: 255}}},
		Rules: []messages.Rule{{ID: "r1", From: "off", On: "button_click", To: "red", Condition: "getData('n') > 1", Priority: 5, Enabled: true}},
		Vars:  map[string]json.RawMessage{"n": json.RawMessage("3")}}
	p := agent.Prompt("kitchen", small)
	for _, want := range []string{`"kitchen"`, "Current state: red.", "r1: off → red on button_click if getData('n') > 1 (priority 5)", "n=3", "getPattern(name)", "counter, toggle, cycle"} {
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
