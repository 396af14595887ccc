package past_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/actors/light/past"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/nats/wire"
)

var update = flag.Bool("update", false, "rewrite golden files")

// step is one input of a scripted journal.
type step struct{ typ, data, by string }

var whyT0 = time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)

// scripted runs steps through a machine as the light would and returns
// the journal it would have written: each input, then its outputs.
// Inputs are a second apart.
func scripted(t *testing.T, name string, steps ...step) *journal.Slice {
	t.Helper()
	m := machine.New(machine.WithEvalTimeout(20 * time.Millisecond))
	defer m.Close()
	s := &journal.Slice{Light: name}
	seq := uint64(0)
	for i, st := range steps {
		seq++
		at := whyT0.Add(time.Duration(i) * time.Second)
		if st.typ == messages.OutAgent { // a step of an agent session: data is its OutAgentData
			var d messages.OutAgentData
			if err := json.Unmarshal([]byte(st.data), &d); err != nil {
				t.Fatal(err)
			}
			env, err := messages.AgentStep(name, d, at)
			if err != nil {
				t.Fatal(err)
			}
			s.Events = append(s.Events, journal.Msg{Seq: seq, Subject: subject.Out(name, messages.OutAgent), Data: messages.AppendEnvelope(nil, &env), Time: at})
			continue
		}
		env := messages.Input(name, st.typ, fmt.Sprint("in-", i), at, json.RawMessage(st.data))
		env.By = st.by
		body := messages.AppendEnvelope(nil, &env)
		s.Events = append(s.Events, journal.Msg{Seq: seq, Subject: subject.In(name, st.typ), Data: body, Time: at})
		res, outs := past.Compute(m, name, past.DecodeInput(name, past.Record{Seq: seq, Subject: subject.In(name, st.typ), Data: body, Time: at}), past.TimedOut{})
		if res.Err != nil {
			t.Fatalf("step %d %s %s: %s", i, st.typ, st.data, res.Err.Error)
		}
		for j, o := range outs {
			seq++
			s.Events = append(s.Events, journal.Msg{Seq: seq, Subject: subject.Out(name, res.Outputs[j].Type), Data: o, Time: at})
		}
	}
	return s
}

const whyStates = `"states":[{"name":"off","r":0,"g":0,"b":0},{"name":"red","r":255,"g":0,"b":0},{"name":"blue","r":0,"g":0,"b":255},
	{"name":"cold","r":0,"g":128,"b":255},{"name":"warm","r":255,"g":128,"b":0}]`

func config(rules string, more ...string) step {
	extra := ""
	for _, m := range more {
		extra += "," + m
	}
	return step{messages.InConfig, `{"op":"apply",` + whyStates + `,"rules":` + rules + extra + `}`, messages.WhoCLI}
}

func click(by string) step {
	return step{messages.InFired, `{"transition":"button_click"}`, by}
}

// The explanation of the light's current state, golden, for each kind of
// decision a rule makes.
func TestWhyGolden(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
	}{
		{"data_source", []step{
			config(`[{"from":"*","on":"weather_updated","to":"cold","condition":"getData('temp') < 10"},
				{"from":"*","on":"weather_updated","to":"warm","condition":"getData('temp') >= 10"}]`,
				`"sources":[{"name":"weather","type":"nats","subject":"home.weather","store":{"temp":"result.temp"},"fires":"weather_updated"}]`),
			{messages.InData, `{"source":"weather","vars":{"temp":14}}`, "source:weather"},
			{messages.InVar, `{"name":"unrelated","value":1}`, messages.WhoCLI},
			{messages.InData, `{"source":"weather","vars":{"temp":5}}`, "source:weather"},
		}},
		{"priority", []step{
			config(`[{"from":"off","on":"button_click","to":"red"},{"from":"off","on":"button_click","to":"blue","priority":10}]`),
			click(messages.WhoButton),
		}},
		{"wildcard", []step{
			config(`[{"from":"*","on":"button_hold","to":"off","action":"setData('holds', (getData('holds') || 0) + 1)"},
				{"from":"blue","on":"button_hold","to":"red"}]`),
			{messages.InState, `{"name":"red"}`, messages.WhoCLI},
			{messages.InFired, `{"transition":"button_hold"}`, messages.WhoButton},
		}},
		{"disabled", []step{
			config(`[{"from":"off","on":"button_click","to":"red","enabled":false},{"from":"off","on":"button_click","to":"blue"}]`),
			{messages.OutAgent, `{"session":"s1","step":1,"kind":"ask","who":"cli","text":"click it blue for me"}`, ""},
			click("agent:s1:3"),
		}},
		{"timer", []step{
			config(`[{"from":"off","on":"button_click","to":"red","action":"startTimer('back', 1000)"},{"from":"red","on":"back","to":"off"}]`),
			click(messages.WhoButton),
			{messages.InTimer, `{"name":"back","deadline":"2026-11-25T08:00:02Z"}`, "timer:back"},
		}},
		{"layer", []step{
			config(`[{"from":"off","on":"button_click","to":"blue"}]`),
			{messages.InConfig, `{"op":"append_rules","rules":[{"from":"*","on":"button_click","to":"red"}],"layer":{"name":"once","fires":1}}`, messages.WhoCLI},
			click(messages.WhoButton),
			click(messages.WhoButton),
		}},
		{"layer_until", []step{
			config(`[{"from":"off","on":"button_click","to":"blue"}]`),
			{messages.InConfig, `{"op":"append_rules","rules":[{"from":"*","on":"button_click","to":"red","condition":"getData('n') === undefined","action":"setData('n', 1)"}],"layer":{"name":"first","until":"getData('n') === 1","restore":false}}`, messages.WhoCLI},
			click(messages.WhoButton),
		}},
		{"timeout", []step{
			config(`[{"from":"off","on":"button_click","to":"red","condition":"(function(){ for(;;){} })()"},{"from":"off","on":"button_click","to":"blue"}]`),
			click(messages.WhoHTTP),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := scripted(t, "k", tt.steps...)
			w, err := past.Why(context.Background(), s, "k", 0)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.MarshalIndent(w, "", "  ")
			golden(t, filepath.Join("testdata", "why", tt.name+".json"), append(got, '\n'))
			golden(t, filepath.Join("testdata", "why", tt.name+".txt"), []byte(past.WhyText(w)))
		})
	}
}

// A seq names an input or one of its outputs; a seq of another light,
// or none, is refused with 404.
func TestWhySeq(t *testing.T) {
	s := scripted(t, "k",
		config(`[{"from":"off","on":"button_click","to":"red"},{"from":"red","on":"button_click","to":"off"}]`),
		click(messages.WhoButton), click(messages.WhoButton))
	now, err := past.Why(context.Background(), s, "k", 0)
	if err != nil {
		t.Fatal(err)
	}
	// The second click's input, and its state output.
	for _, seq := range []uint64{now.Input.Seq, now.Seq} {
		w, err := past.Why(context.Background(), s, "k", seq)
		if err != nil || w.State != "off" || w.Input.Seq != now.Input.Seq || w.Seq != seq {
			t.Errorf("why %d: %+v %v", seq, w, err)
		}
	}
	first, err := past.Why(context.Background(), s, "k", now.Previous.Input.Seq)
	if err != nil || first.State != "red" || first.Rule == nil || first.Rule.ID != "r1" {
		t.Errorf("why of the first click: %+v %v", first, err)
	}
	var we *wire.Error
	if _, err := past.Why(context.Background(), s, "k", 9999); !errors.As(err, &we) || we.Code != 404 {
		t.Errorf("why of no event: %v", err)
	}
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run with -update to create): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden:\n got:\n%s\nwant:\n%s", path, got, want)
	}
}

// A proposal that swaps where two clicks go differs after exactly the
// inputs that leave the light elsewhere; its own timers fire in virtual
// time; one that does not validate is refused.
func TestWhatIf(t *testing.T) {
	s := scripted(t, "k",
		config(`[{"from":"off","on":"button_click","to":"red"},{"from":"red","on":"button_click","to":"blue"},{"from":"blue","on":"button_click","to":"off"}]`),
		click(messages.WhoButton), click(messages.WhoButton),
		step{messages.InVar, `{"name":"n","value":1}`, messages.WhoCLI},
		click(messages.WhoButton), click(messages.WhoButton))
	swapped := []byte(`{"op":"apply",` + whyStates + `,"rules":[{"from":"off","on":"button_click","to":"blue","enabled":true},{"from":"blue","on":"button_click","to":"red","enabled":true},{"from":"red","on":"button_click","to":"off","enabled":true}]}`)
	w, err := past.WhatIf(context.Background(), s, "k", swapped, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range w.Differences {
		got = append(got, fmt.Sprintf("%d:%s>%s", d.Seq, d.Recorded, d.Proposed))
	}
	// Inputs: config 1 (outputs 2), clicks 3, 5, var 7, clicks 9, 11.
	if w.Replayed != 5 || w.Differ != 4 || fmt.Sprint(got) != "[3:red>blue 5:blue>red 7:blue>red 11:red>blue]" {
		t.Errorf("whatif: replayed %d, differ %d, %v", w.Replayed, w.Differ, got)
	}
	// From the second click on, starting from the recorded red: the last
	// click goes to red either way.
	if w, err := past.WhatIf(context.Background(), s, "k", swapped, 5); err != nil || w.Replayed != 4 || w.Differ != 3 {
		t.Errorf("whatif from 5: %+v %v", w, err)
	}
	// A proposal whose click starts a timer that turns the light off.
	timed := []byte(`{"op":"apply",` + whyStates + `,"rules":[{"from":"*","on":"button_click","to":"red","action":"startTimer('t', 500)","enabled":true},{"from":"red","on":"t","to":"off","enabled":true}]}`)
	if w, err := past.WhatIf(context.Background(), s, "k", timed, 0); err != nil || w.Differ != 3 ||
		w.Differences[0].Proposed != "red" || w.Differences[1].Proposed != "off" {
		// Each click makes it red; the timer turns it off before the next
		// input, a second later, so the var input finds it off.
		t.Errorf("whatif with a timer: %+v %v", w, err)
	}
	var we *wire.Error
	bad := []byte(`{"op":"apply",` + whyStates + `,"rules":[{"from":"nowhere","on":"button_click","to":"red","enabled":true}]}`)
	if _, err := past.WhatIf(context.Background(), s, "k", bad, 0); !errors.As(err, &we) || we.Code != 400 {
		t.Errorf("whatif of a bad proposal: %v", err)
	}
}

// What the journal holds before a snapshot still explains: the state
// before, and a what-if from the first input after it; a recorded timer
// keeps the recorded side right; a data input's _prev names it.
func TestWhyAcrossSnapshots(t *testing.T) {
	ctx := context.Background()
	rules := `[{"from":"off","on":"button_click","to":"red","action":"startTimer('t', 300)"},{"from":"red","on":"t","to":"off"},
		{"from":"off","on":"weather","to":"warm","condition":"getData('temp') > getData('temp_prev') && getData('x') === 1"}]`
	full := scripted(t, "k",
		config(rules, `"sources":[{"name":"thermo","type":"nats","subject":"home.t","store":{"temp":"result.temp"},"fires":"weather"}]`),
		click(messages.WhoButton),
		step{messages.InTimer, `{"name":"t","deadline":"2026-11-25T08:00:01.3Z"}`, "timer:t"},
		step{messages.InVar, `{"name":"temp","value":3}`, messages.WhoCLI},
		step{messages.InVar, `{"name":"x","value":1}`, messages.WhoCLI},
		step{messages.InData, `{"source":"thermo","vars":{"temp":5}}`, "source:thermo"})
	var inputs []uint64
	for _, m := range full.Events {
		if _, dir, _, _ := subject.Parse(m.Subject); dir == subject.DirIn {
			inputs = append(inputs, m.Seq)
		}
	}
	want, err := past.Why(ctx, full, "k", 0)
	if err != nil {
		t.Fatal(err)
	}
	if want.Previous == nil || want.Previous.Input.Type != messages.InTimer {
		t.Fatalf("why: the state before is %+v", want.Previous)
	}
	var prev *messages.WhyRead
	for i := range want.Reads {
		if want.Reads[i].Name == "temp_prev" {
			prev = &want.Reads[i]
		}
	}
	if prev == nil || string(prev.Value) != "3" || prev.SetBy == nil || prev.SetBy.Seq != inputs[5] {
		t.Errorf("temp_prev, read by the data input's rule, is set by %+v, want input %d", prev, inputs[5])
	}
	if x := want.Reads[len(want.Reads)-1]; x.Name != "x" || x.SetBy == nil || x.SetBy.Seq != inputs[4] {
		t.Errorf("x is set by %+v, want input %d", x.SetBy, inputs[4])
	}
	// The same with a snapshot right before the var x input: the timer
	// that entered off lies before it.
	cut, err := past.ExportSlice(ctx, full, "k", inputs[4])
	if err != nil || cut.Snapshot == nil {
		t.Fatalf("export: %v", err)
	}
	// And with one right before the data input, after temp was set.
	late, err := past.ExportSlice(ctx, full, "k", inputs[5])
	if err != nil || late.Snapshot == nil {
		t.Fatalf("export: %v", err)
	}
	for _, snap := range [][]byte{cut.Snapshot, late.Snapshot} {
		withSnap := &journal.Slice{Light: "k", Snapshot: snap, Events: full.Events}
		got, err := past.Why(ctx, withSnap, "k", 0)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := mustMarshal(t, got), mustMarshal(t, want); a != b {
			t.Errorf("why with a snapshot:\n%s\nwithout:\n%s", a, b)
		}
	}
	// The same configuration changes nothing, before a snapshot or after
	// one, with a recorded timer in the window.
	same := []byte(`{"op":"apply",` + whyStates + `,"rules":` + rules + `,"sources":[{"name":"thermo","type":"nats","subject":"home.t","store":{"temp":"result.temp"},"fires":"weather"}]}`)
	for name, j := range map[string]past.Events{"full": full, "cut": cut} {
		w, err := past.WhatIf(ctx, j, "k", same, inputs[4])
		if err != nil || w.Differ != 0 || w.Replayed != 2 {
			t.Errorf("whatif of the same configuration on the %s journal: %+v %v", name, w, err)
		}
		if w, err := past.WhatIf(ctx, j, "k", same, 0); name == "full" && (err != nil || w.Differ != 0) {
			t.Errorf("whatif of the whole journal: %+v %v", w, err)
		}
	}
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
