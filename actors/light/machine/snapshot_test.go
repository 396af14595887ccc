package machine_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/messages"
)

// script is a day of a light: configuration, clicks, data, timers and
// schedule ticks, with random() and now() in the rules.
func script() []struct{ typ, payload string } {
	s := []struct{ typ, payload string }{
		{messages.InConfig, `{"op":"apply",
			"states":[{"name":"red","r":255,"g":0,"b":0},{"name":"color/blue","r":0,"g":0,"b":255},{"name":"party","r":"random()*255","g":"random()*255","b":0,"speed":50}],
			"rules":[
				{"from":"*","on":"button_click","to":"red","condition":"getData('counter') === undefined","action":"setData('counter', 2)"},
				{"from":"red","on":"button_click","to":"red","condition":"getData('counter') > 0","action":"setData('counter', getData('counter') - 1)"},
				{"from":"red","on":"button_click","to":"off","condition":"getData('counter') === 0","action":"setData('counter', undefined); startTimer('party', 1500)"},
				{"from":"off","on":"party","to":"party","action":"setData('dice', Math.floor(random() * 6) + 1); setData('at', now())"},
				{"from":"party","on":"button_double_click","to":"color/blue","condition":"random() < 0.5"},
				{"from":"party","on":"button_double_click","to":"red"},
				{"from":"color/*","on":"evening","to":"red"},
				{"from":"*","on":"button_hold","to":"off","priority":100,"action":"cancelTimer('party'); setData('holds', (getData('holds') || 0) + 1)"}],
			"vars":{"mood":{"calm":true,"level":3}},
			"schedules":[{"name":"evening","cron":"0 19 * * *","tz":"Europe/Paris","fires":"evening"}]}`},
	}
	for i := range 15 {
		switch i % 5 {
		case 0, 1, 2, 3:
			s = append(s, struct{ typ, payload string }{messages.InFired, `{"transition":"button_click"}`})
		case 4:
			s = append(s, struct{ typ, payload string }{messages.InFired, `{"transition":"button_double_click","source":"test"}`})
		}
		if i == 5 {
			s = append(s, struct{ typ, payload string }{messages.InVar, `{"name":"temperature","value":21.5}`})
		}
	}
	s = append(s,
		struct{ typ, payload string }{messages.InFired, `{"transition":"button_hold"}`},
		struct{ typ, payload string }{messages.InConfig, `{"op":"append_rules","rules":[{"from":"off","on":"wake","to":"color/blue","action":"startTimer('party', 10)"}]}`},
		struct{ typ, payload string }{messages.InFired, `{"transition":"wake"}`},
		struct{ typ, payload string }{messages.InSchedule, `{"name":"evening","at":"2026-03-28T18:00:00Z"}`},
	)
	return s
}

// run applies the script's inputs from..to, each timer input being made
// from the pending timer so that it matches.
func runScript(t *testing.T, m *machine.Machine, from, to int) []byte {
	t.Helper()
	var out bytes.Buffer
	s := script()
	for i := from; i < to; i++ {
		ev := machine.Event{Seq: uint64(i + 1), Time: t0.Add(time.Duration(i) * 700 * time.Millisecond)}
		typ, payload := s[i].typ, s[i].payload
		if typ == messages.InSchedule {
			ev.Time = time.Date(2026, 3, 28, 18, 0, 3, 0, time.UTC)
		}
		r := m.Apply(ev, typ, []byte(payload))
		fmt.Fprintf(&out, "> %s %s\n", typ, compact(payload))
		for _, o := range r.Outputs {
			fmt.Fprintf(&out, "< %s %s\n", o.Type, mustJSON(t, o.Data))
		}
		// Fire due timers as the actor would, right after.
		for _, tm := range m.PendingTimers() {
			if !tm.Deadline.After(ev.Time.Add(2 * time.Second)) {
				r := m.Apply(machine.Event{Seq: ev.Seq*1000 + 1, Time: tm.Deadline}, messages.InTimer, []byte(timerInput(tm.Name, tm.Deadline, false)))
				fmt.Fprintf(&out, "> timer %s\n", tm.Name)
				for _, o := range r.Outputs {
					fmt.Fprintf(&out, "< %s %s\n", o.Type, mustJSON(t, o.Data))
				}
			}
		}
	}
	return out.Bytes()
}

func TestDeterminism(t *testing.T) {
	n := len(script())
	a, b := machine.New(), machine.New()
	defer a.Close()
	defer b.Close()
	outA, outB := runScript(t, a, 0, n), runScript(t, b, 0, n)
	if !bytes.Equal(outA, outB) {
		t.Errorf("two runs differ:\n%s\n---\n%s", outA, outB)
	}
	golden(t, "day", outA)
}

func TestSnapshotRestore(t *testing.T) {
	n := len(script())
	for _, cut := range []int{1, 5, 9, n - 3, n - 1} {
		t.Run(fmt.Sprintf("snapshot after input %d", cut), func(t *testing.T) {
			whole := machine.New()
			defer whole.Close()
			runScript(t, whole, 0, cut)
			want := runScript(t, whole, cut, n)

			first := machine.New()
			defer first.Close()
			runScript(t, first, 0, cut)
			snap, err := first.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			again, _ := first.Snapshot()
			if !bytes.Equal(snap, again) {
				t.Fatal("two snapshots of one machine differ")
			}
			restored, err := machine.Restore(snap, machine.WithEvalTimeout(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			defer restored.Close()
			if s2, _ := restored.Snapshot(); !bytes.Equal(s2, snap) {
				t.Errorf("the restored machine snapshots differently:\n%s\n%s", s2, snap)
			}
			if got := runScript(t, restored, cut, n); !bytes.Equal(got, want) {
				t.Errorf("after restore:\n%s\nwithout snapshot:\n%s", got, want)
			}
			s1, _ := whole.Snapshot()
			s2, _ := restored.Snapshot()
			if !bytes.Equal(s1, s2) {
				t.Errorf("final snapshots differ:\n%s\n%s", s1, s2)
			}
		})
	}
}

func TestSnapshotFormat(t *testing.T) {
	m := machine.New()
	defer m.Close()
	runScript(t, m, 0, 6)
	snap, err := m.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "snapshot", append(snap, '\n'))
}

func TestRestoreRejects(t *testing.T) {
	tests := []struct {
		name  string
		given string
	}{
		{"not JSON", `{`},
		{"another version", `{"v":2}`},
		{"an unknown state", `{"v":1,"state":"nope","states":[]}`},
		{"a rule to nowhere", `{"v":1,"state":"off","states":[],"rules":[{"id":"r1","from":"*","on":"x","to":"nope"}]}`},
		{"an alias that is no name", `{"v":1,"state":"off","states":[],"aliases":["a/b"]}`},
		{"an alias twice", `{"v":1,"state":"off","states":[],"aliases":["a","a"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if m, err := machine.Restore([]byte(tt.given)); err == nil {
				m.Close()
				t.Error("restored")
			}
		})
	}
}

// Values that JSON cannot carry exactly (-0, lone surrogates) read back
// the same before and after a restore.
func TestSnapshotEdgeValues(t *testing.T) {
	const cfg = `{"op":"apply","rules":[
		{"from":"*","on":"store","to":"off","action":"setData('z', -0); setData('s', 'a\ud800b'); setData('o', {z: -0, s: '\udfff'})"},
		{"from":"*","on":"look","to":"off","action":"setData('seen', [Object.is(getData('z'), -0), getData('s').length, getData('s').charCodeAt(1), getData('o').s.charCodeAt(0), Object.is(getData('o').z, -0)])"}]}`
	live := machine.New()
	defer live.Close()
	live.Apply(machine.Event{Seq: 1, Time: t0}, messages.InConfig, []byte(cfg))
	live.Fire(machine.Event{Seq: 2, Time: t0}, "store")
	snap, err := live.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	restored, err := machine.Restore(snap)
	if err != nil {
		t.Fatal(err)
	}
	defer restored.Close()
	a := outputs(t, live.Fire(machine.Event{Seq: 3, Time: t0}, "look"))
	b := outputs(t, restored.Fire(machine.Event{Seq: 3, Time: t0}, "look"))
	equalLines(t, b, a)
}
