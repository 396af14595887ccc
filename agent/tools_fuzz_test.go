package agent_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/lumen-home/lumen/agent"
)

// FuzzToolCall: whatever a model writes as a call's arguments, to any
// tool, the agent answers it with a result or an error for the model,
// works out its tier, and never panics.
func FuzzToolCall(f *testing.F) {
	specs := agent.Specs()
	for i, args := range []string{`{}`, `{"name":"red","r":255,"g":0,"b":0}`, `{"rules":[{"from":"*","on":"x","to":"red"}]}`,
		`{"name":"w","type":"webhook","fires":"x"}`, `{"name":"fetch_json","args":{"url":"https://x.example/"}}`, `not json`, `[1,2]`,
		`{"question":"which?"}`, `{"message":"done"}`, `{"speak_directly":true,"name":"off"}`, `{"name":"w","fetch":"nope"}`, ""} {
		f.Add(uint8(i), []byte(args))
	}
	f.Fuzz(func(t *testing.T, which uint8, args []byte) {
		name := specs[int(which)%len(specs)].Name
		tools := &agent.Tools{Light: newFakeLight()}
		_ = tools.Tier(context.Background(), name, args, nil)
		out, err := tools.Run(context.Background(), name, args)
		if err == nil && !json.Valid(out) {
			t.Fatalf("%s %q: a result that is not JSON: %q", name, args, out)
		}
	})
}
