package machine_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/messages"
)

// inputTypes are the inputs a fuzzed payload is given as.
var inputTypes = []string{messages.InFired, messages.InState, messages.InVar, messages.InConfig, messages.InTimer,
	messages.InSchedule, messages.InData, messages.InUpgrade, messages.InIntent}

// FuzzApply feeds the demo light any payload as any input. Whatever it
// is, the machine answers (a rejection or outputs) without panicking, two
// machines given the same inputs say the same (replay), and a snapshot
// taken after it restores a machine that goes on exactly the same.
func FuzzApply(f *testing.F) {
	for i, p := range []string{
		`{"transition":"button_click"}`, `{"name":"red"}`, `{"name":"n","value":3}`,
		`{"op":"append_rules","rules":[{"from":"*","on":"x","to":"red","condition":"getData('n') > 1","action":"setData('n', 0)"}]}`,
		`{"op":"create_state","states":[{"name":"p","r":"frame % 256","g":0,"b":0,"speed":10}]}`,
		`{"name":"t"}`, `{"name":"evening"}`, `{"source":"w","vars":{"temp":5}}`, `{"level":1}`, `{"phrase":"cosy","verb":"set_state","arg":"red"}`,
		`{"op":"apply","states":[],"rules":[],"confirm_empty":true}`, `{"op":"create_schedule","name":"s","cron":"0 19 * * *","fires":"evening"}`,
		`{"transition":"` + "\xff" + `"}`, `null`, `[]`, `{"op":"append_rules","rules":[{"from":"red","on":"button_click","to":"red","action":"while(true){}"}]}`,
	} {
		f.Add(uint8(i), []byte(p))
	}
	demo, err := json.Marshal(struct {
		Op string `json:"op"`
		messages.ApplyRequest
	}{messages.OpApply, machine.Demo()})
	if err != nil {
		f.Fatal(err)
	}
	at := time.Date(2026, 3, 28, 12, 0, 0, 0, time.UTC)
	start := func(t *testing.T) *machine.Machine {
		m := machine.New(machine.WithEvalTimeout(20 * time.Millisecond))
		t.Cleanup(m.Close)
		if r := m.Apply(machine.Event{Seq: 1, Time: at}, messages.InConfig, demo); r.Err != nil {
			t.Fatalf("the demo: %s", r.Err.Error)
		}
		return m
	}
	f.Fuzz(func(t *testing.T, typ uint8, payload []byte) {
		a, b := start(t), start(t)
		in := inputTypes[int(typ)%len(inputTypes)]
		ev := machine.Event{Seq: 2, Time: at.Add(time.Second)}
		ra, rb := a.Apply(ev, in, payload), b.Apply(ev, in, payload)
		if ja, jb := resultJSON(t, ra), resultJSON(t, rb); ja != jb {
			t.Fatalf("%s %q: two machines differ:\n%s\n%s", in, payload, ja, jb)
		}
		snap, err := a.Snapshot()
		if err != nil {
			t.Fatalf("%s %q: snapshot: %v", in, payload, err)
		}
		c, err := machine.Restore(snap, machine.WithEvalTimeout(20*time.Millisecond))
		if err != nil {
			t.Fatalf("%s %q: restore: %v", in, payload, err)
		}
		t.Cleanup(c.Close)
		next := machine.Event{Seq: 3, Time: at.Add(2 * time.Second)}
		click := []byte(`{"transition":"button_click"}`)
		if ja, jc := resultJSON(t, a.Apply(next, messages.InFired, click)), resultJSON(t, c.Apply(next, messages.InFired, click)); ja != jc {
			t.Fatalf("%s %q: the restored machine differs:\n%s\n%s", in, payload, ja, jc)
		}
	})
}

func resultJSON(t *testing.T, r machine.Result) string {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatalf("outputs do not encode: %v", err)
	}
	return string(b)
}
