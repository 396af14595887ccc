package machine_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/messages"
)

// plainLight is the acceptance light of issue 17: a click toggles white,
// and a red state waits for a layer.
const plainLight = `{"op":"apply","initial":"off",
	"states":[{"name":"white","r":255,"g":255,"b":255},{"name":"red","r":255,"g":0,"b":0},{"name":"blue","r":0,"g":0,"b":255}],
	"rules":[{"from":"off","on":"button_click","to":"white"},{"from":"white","on":"button_click","to":"off"}]}`

// step is one input of a layer scenario; payload, when set, computes the
// input's payload from the machine (a layer's deadline).
type step struct {
	typ     string
	body    string
	payload func(m *machine.Machine) string
	advance time.Duration // the input comes this long after the previous one (default 1s)
}

func click() step { return step{typ: messages.InFired, body: `{"transition":"button_click"}`} }

func cfg(body string) step { return step{typ: messages.InConfig, body: body} }

func (s step) payloadFor(m *machine.Machine) string {
	if s.payload != nil {
		return s.payload(m)
	}
	return s.body
}

// deadlineOf is the payload of the layer input that ends layer name at
// its deadline.
func deadlineOf(name string, late bool) func(m *machine.Machine) string {
	return func(m *machine.Machine) string {
		for _, d := range m.LayerDeadlines() {
			if d.Name == name {
				return fmt.Sprintf(`{"name":%q,"deadline":%q,"late":%v}`, name, d.Deadline.Format(time.RFC3339Nano), late)
			}
		}
		return fmt.Sprintf(`{"name":%q,"deadline":"2026-03-28T12:00:00Z"}`, name)
	}
}

// run applies steps to l, logging them, and returns the state after each.
func (l *light) run(steps []step) []string {
	l.t.Helper()
	var states []string
	for _, s := range steps {
		ev := l.next()
		if s.advance != 0 {
			l.now = l.now.Add(s.advance - time.Second)
			ev.Time = l.now
		}
		r := l.applyEvent(ev, s.typ, s.payloadFor(l.m))
		if r.Err != nil {
			l.t.Fatalf("input %d %s: rejected: %s", ev.Seq, s.payloadFor(l.m), r.Err.Error)
		}
		states = append(states, r.State)
	}
	return states
}

// scenario runs steps live (compared with testdata/<golden>.golden), then
// checks what the durability contract promises of them: a replay of the
// same inputs gives the same outputs byte for byte, and so does a machine
// restored from a snapshot taken after any input (a restart in the
// middle of a layer), for every later input.
func scenario(t *testing.T, golden string, steps []step) (*light, []string) {
	t.Helper()
	live := newLight(t)
	states := live.run(steps)
	live.golden(golden)

	replay := newLight(t)
	replay.run(steps)
	if !bytes.Equal(replay.log.Bytes(), live.log.Bytes()) {
		t.Errorf("replay differs:\n%s\nlive:\n%s", replay.log.Bytes(), live.log.Bytes())
	}
	for cut := 1; cut < len(steps); cut++ {
		half := newLight(t)
		half.run(steps[:cut])
		m := half.restored()
		rest := &light{t: t, m: m, seq: half.seq, now: half.now}
		rest.run(steps[cut:])
		half.run(steps[cut:])
		if !bytes.Equal(rest.log.Bytes(), half.log.Bytes()[len(half.log.Bytes())-rest.log.Len():]) {
			t.Fatalf("restored after input %d, the rest differs:\n%s\nuninterrupted:\n%s", cut, rest.log.Bytes(), half.log.Bytes())
		}
		if a, b := mustJSON(t, half.m.Model()), mustJSON(t, m.Model()); a != b {
			t.Fatalf("restored after input %d, the models differ:\n%s\n%s", cut, b, a)
		}
	}
	return live, states
}

// The acceptance sequence of issue 17 §1: the next 3 clicks are red, then
// the light's own rules apply again exactly as before, from the state it
// had when the layer began. The fourth click only ends the layer (rule
// null, a layer output), and get shows the light's own rules only.
func TestLayerFires(t *testing.T) {
	steps := []step{
		cfg(plainLight),
		cfg(`{"op":"append_rules","rules":[{"from":"*","on":"button_click","to":"red"}],"layer":{"name":"next3","fires":3}}`),
		click(), click(), click(), click(), click(), click(), click(),
	}
	l, states := scenario(t, "layers_fires", steps)
	if got := strings.Join(states[2:], " "); got != "red red red off white off white" {
		t.Errorf("seven clicks give %s", got)
	}
	g := l.m.Model()
	if len(g.Layers) != 0 || len(g.Rules) != 2 || g.Rules[0].ID != "r1" || g.Rules[1].ID != "r2" {
		t.Errorf("after the layer: rules %+v, layers %+v", g.Rules, g.Layers)
	}

	// While it lives, get shows it with what is left of it, apart from
	// the light's own rules.
	l2 := newLight(t)
	l2.run(steps[:4])
	g = l2.m.Model()
	if len(g.Rules) != 2 || len(g.Layers) != 1 {
		t.Fatalf("rules %+v, layers %+v", g.Rules, g.Layers)
	}
	if got, want := mustJSON(t, g.Layers[0]), `{"name":"next3","rules":[{"id":"r3","from":"*","on":"button_click","to":"red","priority":0,"enabled":true}],"fires_left":1,"restore":true,"began_state":"off"}`; got != want {
		t.Errorf("layer %s, want %s", got, want)
	}
	l2.m.Fire(l2.next(), "button_click")
	r := l2.m.Fire(l2.next(), "button_click")
	if r.Rule != nil || r.State != "off" || !r.Changed {
		t.Errorf("the ending click: %+v", r)
	}
	if got := outputs(t, r); len(got) != 2 || got[0] != `layer {"name":"next3","ended_by":"fires","restored":true}` {
		t.Errorf("the ending click's outputs: %v", got)
	}
}

// With restore false, the input that ends the layer goes on to the
// remaining rules; the layer's rules fire only where they match, and a
// click none of them matches neither counts nor ends the layer.
func TestLayerFiresNoRestore(t *testing.T) {
	_, states := scenario(t, "layers_fires_norestore", []step{
		cfg(plainLight),
		cfg(`{"op":"append_rules","rules":[{"from":"off","on":"button_click","to":"red"},{"from":"red","on":"button_click","to":"blue"}],"layer":{"fires":2,"restore":false}}`),
		click(), // off → red (1)
		click(), // red → blue (2)
		click(), // blue: no layer rule matches, no own rule either
		cfg(`{"op":"append_rules","rules":[{"from":"blue","on":"button_click","to":"off"}]}`),
		click(), // blue → off, by the light's own new rule
		click(), // off: the spent layer would match: it ends, then off → white
		click(), // white → off
	})
	if got := strings.Join(states[2:], " "); got != "red blue blue blue off white off" {
		t.Errorf("states %s", got)
	}
}

// A layer that lasts for a while ends at its deadline (the layer input
// the light arms like a timer), late when the daemon was down then; a
// deadline that does not match is ignored. Its rules are tried before
// the light's own and before older layers' (layers stack, the newest
// first).
func TestLayerDuration(t *testing.T) {
	l, states := scenario(t, "layers_ms", []step{
		cfg(plainLight),
		cfg(`{"op":"append_rules","rules":[{"from":"*","on":"button_click","to":"red"}],"layer":{"name":"party","ms":60000}}`),
		click(), // red
		cfg(`{"op":"append_rules","rules":[{"from":"red","on":"button_click","to":"blue"}],"layer":{"name":"blue","ms":5000,"restore":false}}`),
		click(), // red → blue by the newer layer
		click(), // blue: the newer layer has no rule, the older one: red
		{typ: messages.InLayer, payload: func(*machine.Machine) string {
			return `{"name":"party","deadline":"2026-03-28T12:00:00Z"}`
		}}, // not its deadline: ignored
		{typ: messages.InLayer, payload: deadlineOf("blue", false)}, // ends, not restored
		click(), // red by party
		{typ: messages.InLayer, payload: deadlineOf("party", true), advance: time.Hour}, // late: back to off
		click(), click(),
	})
	if got := strings.Join(states[2:], " "); got != "red red blue red red red red off white off" {
		t.Errorf("states %s", got)
	}
	if d := l.m.LayerDeadlines(); len(d) != 0 {
		t.Errorf("deadlines left: %v", d)
	}
}

// A layer until a condition ends after the first input after which the
// condition holds (not the one that adds it), whatever that input is; a
// condition that throws is taken as false and says so.
func TestLayerUntil(t *testing.T) {
	_, states := scenario(t, "layers_until", []step{
		cfg(plainLight),
		{typ: messages.InVar, body: `{"name":"guests","value":2}`},
		click(), // white
		cfg(`{"op":"append_rules","rules":[{"from":"*","on":"button_click","to":"blue","action":"setData('guests', getData('guests') - 1)"}],
			"layer":{"name":"guests","until":"getData('guests') <= 0 || transition === 'bye'"}}`),
		cfg(`{"op":"append_rules","rules":[{"from":"*","on":"nothing","to":"red"}],"layer":{"name":"always","until":"getData('gone').x === 1"}}`),
		click(), // blue, guests 1
		click(), // blue, guests 0: then the layer ends, back to white
		click(), // white → off by the light's own rules
		{typ: messages.InVar, body: `{"name":"gone","value":{"x":1}}`}, // a var input ends the other layer (began in white)
		cfg(`{"op":"append_rules","rules":[{"from":"*","on":"button_click","to":"red"}],"layer":{"until":"transition === 'bye'","restore":false}}`),
		click(), // red
		{typ: messages.InFired, body: `{"transition":"bye"}`}, // no rule, but the layer ends
		click(), // red has no own rule
	})
	if got := strings.Join(states[2:], " "); got != "white white white blue white off white white red red red" {
		t.Errorf("states %s", got)
	}
}

// Layers are part of the configuration: export carries them with what is
// left of their lifetime, and apply takes them back, the same
// configuration and the same behaviour after; apply without layers ends
// them. A light without layers snapshots and exports as before layers
// existed.
func TestLayersExportApply(t *testing.T) {
	l := newLight(t)
	l.run([]step{
		cfg(plainLight),
		cfg(`{"op":"define_function","functions":[{"name":"done","code":"return getData('n') >= 2;"}]}`),
		cfg(`{"op":"append_rules","rules":[{"from":"*","on":"button_click","to":"red","action":"setData('n', (getData('n') || 0) + 1)"}],"layer":{"name":"a","until":"done()"}}`),
		cfg(`{"op":"append_rules","rules":[{"from":"red","on":"button_hold","to":"blue","priority":3}],"layer":{"name":"b","fires":2,"restore":false}}`),
		cfg(`{"op":"append_rules","rules":[{"id":"x1","from":"*","on":"tick","to":"white"}],"layer":{"name":"c","ms":90000}}`),
		click(),
	})
	exp := l.m.Export()
	if got := mustJSON(t, exp.Layers); got != `[{"name":"c","rules":[{"id":"x1","from":"*","on":"tick","to":"white","priority":0,"enabled":true}],"deadline":"2026-03-28T12:01:34Z","restore":true,"began_state":"off"},`+
		`{"name":"b","rules":[{"id":"r4","from":"red","on":"button_hold","to":"blue","priority":3,"enabled":true}],"fires_left":2,"restore":false,"began_state":"off"},`+
		`{"name":"a","rules":[{"id":"r3","from":"*","on":"button_click","to":"red","action":"setData('n', (getData('n') || 0) + 1)","priority":0,"enabled":true}],"until":"done()","restore":true,"began_state":"off"}]` {
		t.Errorf("export layers %s", got)
	}
	l2 := newLight(t)
	l2.seq, l2.now = l.seq, l.now
	l2.ok(messages.InUpgrade, fmt.Sprintf(`{"level":%d}`, machine.Level))
	// The export does not move the light (it stays off, whatever its
	// initial); state names the state l is in.
	there := exp
	there.State = l.m.State()
	l2.config(applyConfig(t, there))
	if s := l2.m.State(); s != "red" {
		t.Fatalf("applied with state %s, the light is %s", there.State, s)
	}
	if got := l2.m.Export(); !reflect.DeepEqual(got, exp) {
		t.Errorf("re-applied export differs:\n got %+v\nwant %+v", got, exp)
	}
	if a, b := mustJSON(t, l2.m.Model().Layers), mustJSON(t, l.m.Model().Layers); a != b {
		t.Errorf("layers differ:\n%s\n%s", a, b)
	}
	// The same behaviour after: hold → blue (b), click → red and n = 2:
	// a ends, back to off; c ends at its deadline.
	for _, tr := range []string{"button_hold", "button_click", "tick"} {
		equalLines(t, outputs(t, l2.m.Fire(l2.next(), tr)), outputs(t, l.m.Fire(l.next(), tr)))
	}
	for _, m := range []*machine.Machine{l.m, l2.m} {
		d := m.LayerDeadlines()
		if len(d) != 1 {
			t.Fatalf("deadlines %v", d)
		}
		r := m.Apply(machine.Event{Seq: 20, Time: d[0].Deadline}, messages.InLayer, []byte(fmt.Sprintf(`{"name":"c","deadline":%q}`, d[0].Deadline.Format(time.RFC3339Nano))))
		if got := strings.Join(outputs(t, r), "\n"); got != `layer {"name":"c","ended_by":"ms","restored":true}`+"\n"+`state {"from":"white","to":"off","rule":null,"changed":true}` {
			t.Errorf("deadline: %s", got)
		}
	}

	// The YAML a person exports reads back to the same layers.
	y, err := messages.ToYAML(exp)
	if err != nil {
		t.Fatal(err)
	}
	j, err := messages.ToJSON(y, ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	var back messages.ApplyRequest
	if err := messages.Decode(j, &back); err != nil {
		t.Fatal(err)
	}
	if a, b := mustJSON(t, back.Layers), mustJSON(t, exp.Layers); a != b {
		t.Errorf("YAML round trip:\n%s\n%s", a, b)
	}

	// Apply without layers ends them, without restoring.
	r := l2.config(applyConfig(t, messages.ApplyRequest{States: exp.States, Rules: exp.Rules}))
	if len(l2.m.Model().Layers) != 0 || r.State != "off" {
		t.Errorf("after apply without layers: %+v, %s", l2.m.Model().Layers, r.State)
	}
	bare := newLight(t)
	s, _ := bare.m.Snapshot()
	b, _ := json.Marshal(bare.m.Export())
	if bytes.Contains(s, []byte(`"layers"`)) || bytes.Contains(b, []byte(`"layers"`)) || bytes.Contains([]byte(mustJSON(t, bare.m.Model())), []byte(`"layers"`)) {
		t.Errorf("a light without layers names them: %s %s", s, b)
	}
}

// Each refusal says what to fix and leaves the light as it was.
func TestLayerRefusals(t *testing.T) {
	setup := func(t *testing.T) *light {
		l := newLight(t)
		l.run([]step{
			cfg(plainLight),
			cfg(`{"op":"define_function","functions":[{"name":"quiet","code":"return getData('q') === 1;"}]}`),
			cfg(`{"op":"create_state","states":[{"name":"dim","r":9,"g":9,"b":9}]}`),
			{typ: messages.InState, body: `{"name":"dim"}`},
			cfg(`{"op":"append_rules","rules":[{"from":"*","on":"button_click","to":"red"},{"from":"red","on":"x","to":"blue","condition":"quiet()"}],"layer":{"name":"next","fires":2}}`),
			cfg(`{"op":"append_rules","rules":[{"from":"*","on":"y","to":"off"}],"layer":{"name":"calm","until":"quiet()"}}`),
		})
		return l
	}
	tests := []struct {
		name    string
		typ     string
		payload string
		code    int
		want    string
	}{
		{"no lifetime", messages.InConfig, `{"op":"append_rules","rules":[{"from":"*","on":"a","to":"red"}],"layer":{"name":"z"}}`, 400, "give exactly one of fires"},
		{"two lifetimes", messages.InConfig, `{"op":"append_rules","rules":[{"from":"*","on":"a","to":"red"}],"layer":{"fires":1,"ms":100}}`, 400, "give exactly one of fires"},
		{"no fires", messages.InConfig, `{"op":"append_rules","rules":[{"from":"*","on":"a","to":"red"}],"layer":{"fires":0}}`, 400, "fires is 0"},
		{"a negative duration", messages.InConfig, `{"op":"append_rules","rules":[{"from":"*","on":"a","to":"red"}],"layer":{"ms":-5}}`, 400, "ms is -5"},
		{"a bad until", messages.InConfig, `{"op":"append_rules","rules":[{"from":"*","on":"a","to":"red"}],"layer":{"until":"getData('a') ==="}}`, 400, `layer "layer1"'s until has a syntax error`},
		{"until calls a function with too many arguments", messages.InConfig, `{"op":"append_rules","rules":[{"from":"*","on":"a","to":"red"}],"layer":{"until":"quiet(1)"}}`, 400, "calls quiet with 1 argument"},
		{"a duplicate name", messages.InConfig, `{"op":"append_rules","rules":[{"from":"*","on":"a","to":"red"}],"layer":{"name":"next","fires":1}}`, 409, `has a layer "next" already`},
		{"a rule to a missing state", messages.InConfig, `{"op":"append_rules","rules":[{"from":"*","on":"a","to":"pink"}],"layer":{"fires":1}}`, 404, `layer "layer1": rule * --a--> pink (rules[0]): to names state "pink"`},
		{"a rule id in use", messages.InConfig, `{"op":"append_rules","rules":[{"id":"r3","from":"*","on":"a","to":"red"}],"layer":{"fires":1}}`, 409, `rule id "r3" is already used`},
		{"no rules", messages.InConfig, `{"op":"append_rules","rules":[],"layer":{"fires":1}}`, 400, "at least one rule"},
		{"a layer field elsewhere", messages.InConfig, `{"op":"create_state","states":[{"name":"q","r":1,"g":1,"b":1}],"layer":{"fires":1}}`, 400, "create_state does not take layer"},
		{"delete a layer's rule", messages.InConfig, `{"op":"delete_rules","ids":["r1","r3"]}`, 409, "rule r3 belongs to layer next"},
		{"delete an unknown layer", messages.InConfig, `{"op":"delete_layer","name":"nope"}`, 404, `layer "nope" does not exist (it may have ended already); the light's layers are calm, next`},
		{"delete a layer's state", messages.InConfig, `{"op":"delete_state","name":"blue"}`, 409, "state \"blue\" is used by rules r4"},
		{"delete the state a layer returns to", messages.InConfig, `{"op":"delete_state","name":"dim"}`, 409, `state "dim" is where layer calm returns when it ends; end the layer first (delete_layer calm)`},
		{"delete a function a layer calls", messages.InConfig, `{"op":"delete_function","name":"quiet"}`, 409, `function "quiet" is used by rule r4 and layer calm`},
		{"redefine a function a layer's until calls", messages.InConfig, `{"op":"define_function","functions":[{"name":"quiet","params":["a"],"code":"return a;"}]}`, 200, ""},
		{"apply a layer without a lifetime", messages.InConfig, `{"op":"apply","states":[{"name":"red","r":1,"g":0,"b":0}],"layers":[{"name":"a","rules":[{"from":"*","on":"a","to":"red"}],"began_state":"off"}]}`, 400, `layer "a": give exactly one of fires_left, deadline or until`},
		{"apply a layer returning to a missing state", messages.InConfig, `{"op":"apply","states":[{"name":"red","r":1,"g":0,"b":0}],"layers":[{"name":"a","fires_left":1,"rules":[{"from":"*","on":"a","to":"red"}],"began_state":"pink"}]}`, 404, `began_state names state "pink"`},
		{"apply two layers of a name", messages.InConfig, `{"op":"apply","states":[{"name":"red","r":1,"g":0,"b":0}],"layers":[{"name":"a","fires_left":1,"rules":[{"from":"*","on":"a","to":"red"}],"began_state":"off"},{"name":"a","fires_left":1,"rules":[{"from":"*","on":"b","to":"red"}],"began_state":"off"}]}`, 409, `layer "a" is listed twice`},
		{"apply a rule id twice across layers", messages.InConfig, `{"op":"apply","states":[{"name":"red","r":1,"g":0,"b":0}],"rules":[{"id":"r9","from":"*","on":"c","to":"red"}],"layers":[{"name":"a","fires_left":1,"rules":[{"id":"r9","from":"*","on":"a","to":"red"}],"began_state":"off"}]}`, 409, `rule id "r9" is already used`},
		{"a layer input without a name", messages.InLayer, `{"deadline":"2026-03-28T12:00:00Z"}`, 400, "layer: name is empty"},
		{"disable an unknown rule", messages.InConfig, `{"op":"disable_rules","ids":["r3","r99"]}`, 404, "no rule has id r99"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := setup(t)
			before, _ := l.m.Snapshot()
			r := l.apply(tt.typ, tt.payload)
			if tt.code == 200 {
				// Taken where nothing that calls quiet breaks: the
				// relinked until still ends its layer.
				if r.Err != nil {
					t.Fatalf("rejected: %s", r.Err.Error)
				}
				return
			}
			if r.Err == nil || r.Err.Code != tt.code || !strings.Contains(r.Err.Error, tt.want) {
				t.Fatalf("got %+v, want %d %q", r.Err, tt.code, tt.want)
			}
			if after, _ := l.m.Snapshot(); !bytes.Equal(after, before) {
				t.Errorf("the refusal changed the light:\n%s\n%s", before, after)
			}
		})
	}
}

// The most layers a light has at once.
func TestLayerLimit(t *testing.T) {
	l := newLight(t)
	l.config(plainLight)
	l.ok(messages.InUpgrade, fmt.Sprintf(`{"level":%d}`, machine.Level))
	for i := range messages.MaxLayers {
		l.config(fmt.Sprintf(`{"op":"append_rules","rules":[{"from":"*","on":"t%d","to":"red"}],"layer":{"fires":1}}`, i))
	}
	r := l.apply(messages.InConfig, `{"op":"append_rules","rules":[{"from":"*","on":"t","to":"red"}],"layer":{"fires":1}}`)
	if r.Err == nil || r.Err.Code != 409 || !strings.Contains(r.Err.Error, "the most it takes") {
		t.Fatalf("layer %d: %+v", messages.MaxLayers+1, r.Err)
	}
	if g := l.m.Model(); g.Layers[0].Name != fmt.Sprintf("layer%d", messages.MaxLayers) || g.Layers[len(g.Layers)-1].Name != "layer1" {
		t.Errorf("names %s … %s", g.Layers[0].Name, g.Layers[len(g.Layers)-1].Name)
	}
}

// delete_layer ends a layer early, returning to the state it began in
// when it restores; enable_rules and disable_rules switch a layer's rules
// as they switch the light's own, and a disabled layer rule neither fires
// nor ends its layer.
func TestDeleteLayerAndSwitchRules(t *testing.T) {
	_, states := scenario(t, "layers_delete", []step{
		cfg(plainLight),
		cfg(`{"op":"append_rules","rules":[{"from":"*","on":"button_click","to":"red"}],"layer":{"name":"a","fires":1}}`),
		click(), // red
		cfg(`{"op":"disable_rules","ids":["r3"]}`), // the spent layer's rule, off
		click(), // red: nothing matches
		cfg(`{"op":"disable_rules","ids":["r1","r2"]}`),     // the own rules too
		cfg(`{"op":"enable_rules","ids":["r1","r2","r3"]}`), // all back
		cfg(`{"op":"append_rules","rules":[{"from":"red","on":"button_click","to":"blue"}],"layer":{"name":"b","fires":5}}`),
		click(),                                 // blue by b
		cfg(`{"op":"delete_layer","name":"b"}`), // back to red
		cfg(`{"op":"delete_layer","name":"a"}`), // back to off
		click(),                                 // white
	})
	if got := strings.Join(states, " "); got != "off off red red red red red red blue red off white" {
		t.Errorf("states %s", got)
	}
}

// An until condition that runs out of time is taken as false with a
// timeout error naming the layer; replay, which is told, does not run it
// and writes the same outputs.
func TestLayerUntilTimeout(t *testing.T) {
	layer := `{"op":"append_rules","rules":[{"from":"*","on":"button_click","to":"red","action":"setData('r', random())"}],"layer":{"name":"slow","until":"getData('slow') && (() => { for (;;) {} })()"}}`
	live := newLight(t, machine.WithEvalTimeout(20*time.Millisecond))
	live.config(plainLight)
	live.config(layer)
	live.ok(messages.InVar, `{"name":"slow","value":true}`)
	r := live.fire("button_click")
	got := strings.Join(outputs(t, r), "\n")
	if !strings.Contains(got, `error {"code":400,"error":"layer slow: its until condition ran longer, or used more memory, than an expression may and was taken as false; make it finish quickly","kind":"timeout","layer":"slow"}`) {
		t.Fatalf("outputs:\n%s", got)
	}
	replay := newLight(t)
	replay.config(plainLight)
	replay.config(layer)
	replay.ok(messages.InVar, `{"name":"slow","value":true}`)
	ev := replay.next()
	ev.TimedOutUntil = []string{"slow"}
	if r2 := replay.m.Apply(ev, messages.InFired, []byte(`{"transition":"button_click"}`)); strings.Join(outputs(t, r2), "\n") != got {
		t.Errorf("replay:\n%s\nlive:\n%s", strings.Join(outputs(t, r2), "\n"), got)
	}
}
