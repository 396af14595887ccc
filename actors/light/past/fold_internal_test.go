package past

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/messages"
)

// An older lumen's refusal replays by its decision, not its wording; at
// the current level, and for anything but the sentence, byte for byte.
func TestMismatchOfRewordedRefusals(t *testing.T) {
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	errOut := func(code int, kind, sentence string) []byte {
		data, _ := json.Marshal(messages.OutErrorData{Code: code, Error: sentence, Kind: kind})
		env := messages.Output("demo", 7, 0, messages.OutError, at, data)
		return messages.AppendEnvelope(nil, &env)
	}
	old := errOut(404, messages.ErrorRejected, `state "x" does not exist; create it first`)
	tests := []struct {
		name     string
		level    int
		computed []byte
		differs  bool
	}{
		{"same bytes", machine.Level, old, false},
		{"reworded, older level", machine.Level - 1, errOut(404, messages.ErrorRejected, `state "x" does not exist; create it first ('lumen state add')`), false},
		{"reworded, current level", machine.Level, errOut(404, messages.ErrorRejected, `state "x" does not exist; create it first ('lumen state add')`), true},
		{"another code, older level", machine.Level - 1, errOut(400, messages.ErrorRejected, `state "x" does not exist; create it first`), true},
		{"another kind, older level", machine.Level - 1, errOut(404, messages.ErrorTimeout, `state "x" does not exist; create it first`), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &Applied{Input: Input{Seq: 7}, Level: tt.level, Computed: [][]byte{tt.computed},
				Recorded: []Record{{Seq: 8, Subject: "lumen.demo.evt.out.error", Data: old}}}
			if _, why := a.Mismatch(); (why != "") != tt.differs {
				t.Fatalf("mismatch %q, want differs=%v", why, tt.differs)
			}
		})
	}
}
