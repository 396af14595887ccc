package machine_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/messages"
)

// benchLight is the seed's counter example plus a guarded rule and a
// wildcard rule.
const benchLight = `{"op":"apply",
"states":[{"name":"red","r":255,"g":0,"b":0},{"name":"blue","r":0,"g":0,"b":255}],
"rules":[
 {"from":"*","on":"button_click","to":"red","condition":"getData('counter') === undefined","action":"setData('counter', 2)"},
 {"from":"red","on":"button_click","to":"red","condition":"getData('counter') > 0","action":"setData('counter', getData('counter') - 1)"},
 {"from":"red","on":"button_click","to":"off","condition":"getData('counter') === 0","action":"setData('counter', undefined)"},
 {"from":"off","on":"button_click","to":"blue","condition":"getData('mode') === 'night'","priority":10},
 {"from":"*","on":"button_hold","to":"off","priority":100,"action":"setData('counter', undefined)"}
]}`

// newBenchMachine is a machine at this lumen's level, as every light is
// once it has started: its inputs pay for the level's checks.
func newBenchMachine(tb testing.TB) *machine.Machine {
	tb.Helper()
	m := machine.New()
	tb.Cleanup(m.Close)
	mustApply(tb, m, machine.Event{Seq: 1, Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}, messages.InUpgrade, fmt.Sprintf(`{"level":%d}`, machine.Level))
	return m
}

func mustApply(tb testing.TB, m *machine.Machine, ev machine.Event, typ, payload string) machine.Result {
	tb.Helper()
	r := m.Apply(ev, typ, []byte(payload))
	if r.Err != nil {
		tb.Fatalf("%s %s: rejected: %s", typ, payload, r.Err.Error)
	}
	return r
}

// benchLightJS is benchLight with expressions the fast path does not
// take, so that every condition and action runs in goja.
const benchLightJS = `{"op":"apply",
"states":[{"name":"red","r":255,"g":0,"b":0},{"name":"blue","r":0,"g":0,"b":255}],
"rules":[
 {"from":"*","on":"button_click","to":"red","condition":"getData('counter') === void 0","action":"setData('counter', 1 + 1)"},
 {"from":"red","on":"button_click","to":"red","condition":"getData('counter') > 0 && true","action":"setData('counter', getData('counter') - 1 | 0)"},
 {"from":"red","on":"button_click","to":"off","condition":"getData('counter') === 0 && true","action":"setData('counter', void 0)"},
 {"from":"off","on":"button_click","to":"blue","condition":"getData('mode') === 'night' && true","priority":10},
 {"from":"*","on":"button_hold","to":"off","priority":100,"action":"setData('counter', void 0)"}
]}`

func BenchmarkMachineFire(b *testing.B) {
	b.Run("fast", func(b *testing.B) { benchFire(b, benchLight) })
	b.Run("goja", func(b *testing.B) { benchFire(b, benchLightJS) })
}

func benchFire(b *testing.B, light string) {
	m := newBenchMachine(b)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mustApply(b, m, machine.Event{Seq: 1, Time: t0}, messages.InConfig, light)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		tr := "button_click"
		if i%16 == 15 {
			tr = "button_hold"
		}
		ev := machine.Event{Seq: uint64(i + 2), Time: t0.Add(time.Duration(i) * time.Millisecond)}
		if r := m.Fire(ev, tr); r.Err != nil || len(r.Outputs) == 0 {
			b.Fatalf("fire %d: %+v", i, r)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
}

func BenchmarkMachineApplyFired(b *testing.B) {
	m := newBenchMachine(b)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mustApply(b, m, machine.Event{Seq: 1, Time: t0}, messages.InConfig, benchLight)
	click := []byte(`{"transition":"button_click"}`)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		ev := machine.Event{Seq: uint64(i + 2), Time: t0.Add(time.Duration(i) * time.Millisecond)}
		if r := m.Apply(ev, messages.InFired, click); r.Err != nil {
			b.Fatal(r.Err.Error)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
}

// BenchmarkMatch10k measures matching among 10,000 rules on one
// transition: the candidates of (transition, state) come from the index
// and its cache, and the first candidate, without a condition, fires.
func BenchmarkMatch10k(b *testing.B) {
	m := machine.New()
	defer m.Close()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var req messages.ApplyRequest
	for i := range 100 {
		req.States = append(req.States, messages.State{Name: fmt.Sprintf("color/s%d", i), R: messages.Num(1), G: messages.Num(2), B: messages.Num(3)})
	}
	for i := range 10_000 {
		r := messages.Rule{On: "tick", To: fmt.Sprintf("color/s%d", i%100), Enabled: true, Priority: i % 7}
		switch i % 3 {
		case 0:
			r.From = fmt.Sprintf("color/s%d", (i/3)%100)
		case 1:
			r.From = "color/*"
			r.Condition = "getData('never') === 1"
		case 2:
			r.From = "*"
			r.Condition = "getData('never') === 2"
		}
		req.Rules = append(req.Rules, r)
	}
	// The winner: top priority, no condition, from every state back to itself.
	req.Rules = append(req.Rules, messages.Rule{From: "*", On: "tick", To: "color/s0", Priority: 1000, Enabled: true})
	req.Initial = "color/s0"
	payload, _ := json.Marshal(struct {
		Op string `json:"op"`
		messages.ApplyRequest
	}{"apply", req})
	mustApply(b, m, machine.Event{Seq: 1, Time: t0}, messages.InConfig, string(payload))
	ev := machine.Event{Seq: 2, Time: t0}
	m.Fire(ev, "tick") // fills the cache
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ev.Seq = uint64(i + 3)
		if r := m.Fire(ev, "tick"); r.Rule == nil {
			b.Fatal("no rule fired")
		}
	}
}

func BenchmarkNew(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		machine.New().Close()
	}
}

// funcInline and funcCalled are the same light: its rules' logic written
// inline, and moved into custom functions the rules call.
const (
	funcInline = `{"op":"apply",
"states":[{"name":"red","r":255,"g":0,"b":0},{"name":"blue","r":0,"g":0,"b":255}],
"rules":[
 {"from":"*","on":"button_click","to":"red","condition":"(getData('n') || 0) % 3 !== 1 && getData('mode') !== 'night'","action":"setData('n', ((getData('n') || 0) * 7 + 3) % 1000)"},
 {"from":"*","on":"button_click","to":"blue","action":"setData('n', ((getData('n') || 0) + 1) % 1000)"}
]}`
	funcCalled = `{"op":"apply",
"states":[{"name":"red","r":255,"g":0,"b":0},{"name":"blue","r":0,"g":0,"b":255}],
"functions":[
 {"name":"keep","params":["n","mode"],"code":"return (n || 0) % 3 !== 1 && mode !== 'night';"},
 {"name":"step","params":["n"],"code":"return ((n || 0) * 7 + 3) % 1000;"},
 {"name":"next","params":["n"],"code":"return ((n || 0) + 1) % 1000;"}],
"rules":[
 {"from":"*","on":"button_click","to":"red","condition":"keep(getData('n'), getData('mode'))","action":"setData('n', step(getData('n')))"},
 {"from":"*","on":"button_click","to":"blue","action":"setData('n', next(getData('n')))"}
]}`
)

// BenchmarkFunctionCall fires the same clicks at a light whose rules call
// custom functions and at one with the same logic inline, alternating in
// one run so that both see the same machine load, and reports the time of
// a click on each and their ratio (issue 17: at most 1.5).
func BenchmarkFunctionCall(b *testing.B) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	inline, called := newBenchMachine(b), newBenchMachine(b)
	mustApply(b, inline, machine.Event{Seq: 2, Time: t0}, messages.InConfig, funcInline)
	mustApply(b, called, machine.Event{Seq: 2, Time: t0}, messages.InConfig, funcCalled)
	b.ReportAllocs()
	b.ResetTimer()
	var tInline, tCalled time.Duration
	for i := 0; i < b.N; i++ {
		ev := machine.Event{Seq: uint64(i + 3), Time: t0.Add(time.Duration(i) * time.Millisecond)}
		start := time.Now()
		a := inline.Fire(ev, "button_click")
		mid := time.Now()
		c := called.Fire(ev, "button_click")
		tInline, tCalled = tInline+mid.Sub(start), tCalled+time.Since(mid)
		if a.State != c.State || len(a.Outputs) != len(c.Outputs) || a.Err != nil {
			b.Fatalf("click %d: inline %+v, called %+v", i, a, c)
		}
	}
	b.ReportMetric(float64(tInline.Nanoseconds())/float64(b.N), "inline-ns/click")
	b.ReportMetric(float64(tCalled.Nanoseconds())/float64(b.N), "function-ns/click")
	b.ReportMetric(float64(tCalled)/float64(tInline), "function-vs-inline")
}

// benchLayers are ten live layers over benchLight, of every lifetime:
// rules on the clicks from a state the benchmark never enters, and on
// other transitions; until conditions (taking the fast path) that never
// hold, so every input evaluates them.
func benchLayers(tb testing.TB, m *machine.Machine, t0 time.Time) {
	tb.Helper()
	for i := range 10 {
		var life string
		switch i % 3 {
		case 0:
			life = `"fires":1000000000`
		case 1:
			life = `"ms":1000000000000`
		case 2:
			life = fmt.Sprintf(`"until":"getData('stop%d') === 1"`, i)
		}
		mustApply(tb, m, machine.Event{Seq: uint64(10 + i), Time: t0}, messages.InConfig, fmt.Sprintf(`{"op":"append_rules","rules":[
			{"from":"blue","on":"button_click","to":"red","condition":"getData('n%d') === 1"},
			{"from":"*","on":"tick%d","to":"blue"}],"layer":{"name":"l%d",%s}}`, i, i, i, life))
	}
}

// BenchmarkLayers fires the same inputs at benchLight and at benchLight
// with ten live layers (benchLayers), alternating in one run so that both
// see the same machine load, and reports the events per second of each
// and their ratio (issue 17: with layers at least 80% of without).
func BenchmarkLayers(b *testing.B) {
	b.Run("fast", func(b *testing.B) { benchLayered(b, benchLight) })
	b.Run("goja", func(b *testing.B) { benchLayered(b, benchLightJS) })
}

func benchLayered(b *testing.B, light string) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	none, layered := newBenchMachine(b), newBenchMachine(b)
	mustApply(b, none, machine.Event{Seq: 2, Time: t0}, messages.InConfig, light)
	mustApply(b, layered, machine.Event{Seq: 2, Time: t0}, messages.InConfig, light)
	benchLayers(b, layered, t0)
	if n := len(layered.Model().Layers); n != 10 {
		b.Fatalf("%d layers", n)
	}
	b.ReportAllocs()
	b.ResetTimer()
	var tNone, tLayered time.Duration
	for i := 0; i < b.N; i++ {
		tr := "button_click"
		if i%16 == 15 {
			tr = "button_hold"
		}
		ev := machine.Event{Seq: uint64(i + 100), Time: t0.Add(time.Duration(i) * time.Millisecond)}
		start := time.Now()
		a := none.Fire(ev, tr)
		mid := time.Now()
		c := layered.Fire(ev, tr)
		tNone, tLayered = tNone+mid.Sub(start), tLayered+time.Since(mid)
		if a.State != c.State || len(a.Outputs) != len(c.Outputs) || a.Err != nil {
			b.Fatalf("input %d: none %+v, layered %+v", i, a, c)
		}
	}
	b.ReportMetric(float64(b.N)/tNone.Seconds(), "none-events/s")
	b.ReportMetric(float64(b.N)/tLayered.Seconds(), "layers-events/s")
	b.ReportMetric(float64(tNone)/float64(tLayered), "layers-vs-none")
}
