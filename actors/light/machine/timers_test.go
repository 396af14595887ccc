package machine_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/messages"
)

func timerInput(name string, deadline time.Time, late bool) string {
	return fmt.Sprintf(`{"name":%q,"deadline":%q,"late":%v}`, name, deadline.Format(time.RFC3339Nano), late)
}

func TestTimers(t *testing.T) {
	l := newLight(t)
	l.config(`{"op":"apply","states":[{"name":"red","r":255,"g":0,"b":0},{"name":"blue","r":0,"g":0,"b":255}],"rules":[
		{"from":"*","on":"arm","to":"red","action":"startTimer('dim', 500)"},
		{"from":"red","on":"dim","to":"blue"},
		{"from":"*","on":"rearm","to":"red","action":"startTimer('dim', 2000)"},
		{"from":"*","on":"disarm","to":"off","action":"cancelTimer('dim'); cancelTimer('never-started')"},
		{"from":"*","on":"lonely","to":"off","action":"startTimer('unhandled', 10)"}]}`)
	deadline := func() time.Time {
		for _, tm := range l.m.PendingTimers() {
			if tm.Name == "dim" {
				return tm.Deadline
			}
		}
		t.Fatal("no pending timer dim")
		return time.Time{}
	}
	tests := []struct {
		name  string
		given func() machine.Result
		want  string // the state after
	}{
		{"start", func() machine.Result { return l.fire("arm") }, "red"},
		{"a mismatched deadline is ignored", func() machine.Result {
			return l.ok(messages.InTimer, timerInput("dim", deadline().Add(time.Millisecond), false))
		}, "red"},
		{"the matching deadline fires", func() machine.Result { return l.ok(messages.InTimer, timerInput("dim", deadline(), false)) }, "blue"},
		{"a fired timer does not fire again", func() machine.Result {
			return l.ok(messages.InTimer, timerInput("dim", t0.Add(2*time.Second+500*time.Millisecond), false))
		}, "blue"},
		{"start again", func() machine.Result { return l.fire("arm") }, "red"},
		{"replace", func() machine.Result { return l.fire("rearm") }, "red"},
		{"the replaced deadline is ignored", func() machine.Result {
			return l.ok(messages.InTimer, timerInput("dim", t0.Add(5*time.Second+500*time.Millisecond), false))
		}, "red"},
		{"cancel", func() machine.Result { return l.fire("disarm") }, "off"},
		{"a cancelled timer is ignored", func() machine.Result {
			return l.ok(messages.InTimer, timerInput("dim", t0.Add(8*time.Second), false))
		}, "off"},
		{"start before a power cut", func() machine.Result { return l.fire("arm") }, "red"},
		{"late after the power cut", func() machine.Result {
			d := deadline()
			l.now = l.now.Add(time.Hour)
			return l.ok(messages.InTimer, timerInput("dim", d, true))
		}, "blue"},
		{"a timer without rule is ignored after it fires", func() machine.Result {
			l.fire("lonely")
			return l.ok(messages.InTimer, timerInput("unhandled", l.m.PendingTimers()[0].Deadline, false))
		}, "off"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if r := tt.given(); r.State != tt.want {
				t.Errorf("state %s, want %s: %v", r.State, tt.want, outputs(t, r))
			}
		})
	}
	if timers := l.m.PendingTimers(); len(timers) != 0 {
		t.Errorf("pending timers at the end: %v", timers)
	}
	l.golden("timers")
}

func TestPendingTimersOrder(t *testing.T) {
	l := newLight(t)
	l.config(`{"op":"append_rules","rules":[{"from":"*","on":"go","to":"off","action":"startTimer('b', 100); startTimer('a', 100); startTimer('c', 50)"}]}`)
	l.fire("go")
	at := l.now
	want := []messages.Timer{
		{Name: "c", Deadline: at.Add(50 * time.Millisecond)},
		{Name: "a", Deadline: at.Add(100 * time.Millisecond)},
		{Name: "b", Deadline: at.Add(100 * time.Millisecond)},
	}
	if got := l.m.PendingTimers(); mustJSON(t, got) != mustJSON(t, want) {
		t.Errorf("timers %s, want %s", mustJSON(t, got), mustJSON(t, want))
	}
	if got := l.m.Model().Timers; mustJSON(t, got) != mustJSON(t, want) {
		t.Errorf("model timers %s", mustJSON(t, got))
	}
}

func scheduleInput(name string, at time.Time, late bool) string {
	return fmt.Sprintf(`{"name":%q,"at":%q,"late":%v}`, name, at.Format(time.RFC3339Nano), late)
}

func TestSchedules(t *testing.T) {
	l := newLight(t)
	l.config(`{"op":"apply","states":[{"name":"red","r":255,"g":0,"b":0}],"rules":[
		{"from":"*","on":"evening","to":"red"},{"from":"red","on":"night","to":"off"}]}`)
	// 2026-03-28 is the Saturday before summer time in Paris: 19:00 is
	// 18:00 UTC today and 17:00 UTC tomorrow.
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	next := func(name string) string {
		for _, s := range l.m.NextSchedules() {
			if s.Name == name && s.Next != nil {
				return s.Next.Format(time.RFC3339)
			}
		}
		return "none"
	}
	tests := []struct {
		name     string
		given    func() machine.Result
		want     string // the state after
		wantNext string // evening's next tick after
	}{
		{"create computes next in the time zone", func() machine.Result {
			return l.config(`{"op":"create_schedule","schedules":[{"name":"evening","cron":"0 19 * * *","tz":"Europe/Paris","fires":"evening"},{"name":"night","cron":"@daily","fires":"night"}]}`)
		}, "off", "2026-03-28T18:00:00Z"},
		{"a tick for another time is ignored", func() machine.Result {
			return l.ok(messages.InSchedule, scheduleInput("evening", at("2026-03-28T19:00:00Z"), false))
		}, "off", "2026-03-28T18:00:00Z"},
		{"the tick fires and moves next over the change to summer time", func() machine.Result {
			l.now = at("2026-03-28T18:00:00Z")
			return l.ok(messages.InSchedule, scheduleInput("evening", at("2026-03-28T18:00:00Z"), false))
		}, "red", "2026-03-29T17:00:00Z"},
		{"the same tick again is ignored", func() machine.Result {
			return l.ok(messages.InSchedule, scheduleInput("evening", at("2026-03-28T18:00:00Z"), false))
		}, "red", "2026-03-29T17:00:00Z"},
		{"after days off, a late tick fires once and next is after now", func() machine.Result {
			l.now = at("2026-04-02T20:30:00Z")
			return l.ok(messages.InSchedule, scheduleInput("evening", at("2026-03-29T17:00:00Z"), true))
		}, "red", "2026-04-03T17:00:00Z"},
		{"recreating it unchanged keeps next", func() machine.Result {
			return l.config(`{"op":"create_schedule","schedules":[{"name":"evening","cron":"0 19 * * *","tz":"Europe/Paris","fires":"evening"}]}`)
		}, "red", "2026-04-03T17:00:00Z"},
		{"changing it computes next again", func() machine.Result {
			return l.config(`{"op":"create_schedule","schedules":[{"name":"evening","cron":"30 20 * * 1-5","tz":"Europe/Paris","fires":"evening"}]}`)
		}, "red", "2026-04-03T18:30:00Z"},
		{"a tick of a deleted schedule is ignored", func() machine.Result {
			l.config(`{"op":"delete_schedule","name":"night"}`)
			return l.ok(messages.InSchedule, scheduleInput("night", at("2026-04-03T00:00:00Z"), false))
		}, "red", "2026-04-03T18:30:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.given()
			if r.State != tt.want {
				t.Errorf("state %s, want %s: %v", r.State, tt.want, outputs(t, r))
			}
			if got := next("evening"); got != tt.wantNext {
				t.Errorf("next %s, want %s", got, tt.wantNext)
			}
		})
	}
	l.golden("schedules")
}
