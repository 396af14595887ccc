package agent

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/lumen-home/lumen/messages"
)

// A session's snapshot, which encodes only the messages added since the
// last one, decodes to the session json.Marshal encodes, after any
// number of requests, past the transcript's bound too.
func TestSnapshotEncoding(t *testing.T) {
	at := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	s := NewState("default")
	same := func(when string) {
		t.Helper()
		fast, err := s.snapshot()
		if err != nil {
			t.Fatal(err)
		}
		plain, _ := json.Marshal(s)
		var a, b State
		if err := json.Unmarshal(fast, &a); err != nil {
			t.Fatalf("%s: %v\n%s", when, err, fast)
		}
		_ = json.Unmarshal(plain, &b)
		ja, _ := json.Marshal(&a)
		jb, _ := json.Marshal(&b)
		if string(ja) != string(jb) {
			t.Fatalf("%s: the snapshot decodes to\n%s\nwant\n%s", when, ja, jb)
		}
	}
	same("empty")
	for i := range MaxTranscript {
		step := func(ev messages.OutAgentData) {
			ev.Step = s.Step + 1
			s.Apply(ev, at.Add(time.Duration(ev.Step)*time.Second))
		}
		id := fmt.Sprintf("local_%d", i)
		step(messages.OutAgentData{Kind: messages.AgentKindAsk, Text: fmt.Sprintf("red %d \"quoted\"", i)})
		step(messages.OutAgentData{Kind: messages.AgentKindModel, Message: &messages.AgentMessage{Role: "assistant",
			ToolCalls: []messages.AgentToolCall{{ID: id, Name: ToolSetState, Args: `{"name":"red"}`}}}})
		step(messages.OutAgentData{Kind: messages.AgentKindTool, Call: &messages.ToolStep{ID: id, Tool: ToolSetState,
			Args: json.RawMessage(`{"name":"red"}`), Tier: messages.TierAutonomous, OK: true, Result: json.RawMessage(`{"ok":true}`)}})
		step(messages.OutAgentData{Kind: messages.AgentKindEnd, Status: messages.AgentDone, Text: "The light is red now."})
		if i%7 == 0 || i == MaxTranscript-1 {
			same(fmt.Sprintf("after request %d", i))
		}
	}
	if len(s.Transcript) > MaxTranscript+3 {
		t.Fatalf("the transcript has %d messages", len(s.Transcript))
	}
}
