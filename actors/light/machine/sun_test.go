package machine_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/internal/solar"
	"github.com/lumen-home/lumen/messages"
)

// tickOf is the payload of the schedule input of name's next tick.
func tickOf(name string) func(m *machine.Machine) string {
	return func(m *machine.Machine) string {
		for _, s := range m.NextSchedules() {
			if s.Name == name && s.Next != nil {
				return scheduleInput(name, *s.Next, false)
			}
		}
		return scheduleInput(name, t0, false)
	}
}

// A sun schedule at a place: its next tick is the event plus its offset,
// computed from the input's time; each tick moves it to the next day's;
// live, replayed and restored from a snapshot after every input, the
// same.
func TestSunSchedules(t *testing.T) {
	const atlanta = `"lat":33.8,"lon":-84.4`
	live, states := scenario(t, "sun", []step{
		cfg(`{"op":"apply","states":[{"name":"dawn","r":255,"g":120,"b":40}],"rules":[{"from":"*","on":"wake","to":"dawn"},{"from":"*","on":"night","to":"off"}]}`),
		cfg(`{"op":"create_schedule","schedules":[{"name":"wake","sun":"sunrise","offset":"-30m",` + atlanta + `,"fires":"wake"},{"name":"night","sun":"dusk",` + atlanta + `,"fires":"night"}]}`),
		{typ: messages.InSchedule, payload: tickOf("wake"), advance: 18 * time.Hour},
		{typ: messages.InSchedule, payload: tickOf("night"), advance: 12 * time.Hour},
		{typ: messages.InSchedule, payload: tickOf("wake"), advance: 12 * time.Hour},
	})
	if want := "off off dawn off dawn"; strings.Join(states, " ") != want {
		t.Errorf("states %v, want %s", states, want)
	}
	// Its next tick is what the solar equations say, for that place.
	var wake messages.Schedule
	for _, s := range live.m.NextSchedules() {
		if s.Name == "wake" {
			wake = s
		}
	}
	// After the tick it fired last, on the 30th.
	want, ok := solar.Next(solar.Sunrise, time.Date(2026, 3, 30, 12, 0, 0, 0, time.UTC), 33.8, -84.4, -30*time.Minute)
	if !ok || wake.Next == nil || !wake.Next.Equal(want) {
		t.Errorf("wake's next %v, want %v", wake.Next, want)
	}
	if b := mustJSON(t, live.m.Export().Schedules); !strings.Contains(b, `"sun":"sunrise","offset":"-30m","lat":33.8,"lon":-84.4`) || strings.Contains(b, `"cron"`) {
		t.Errorf("export: %s", b)
	}
}

// A sun schedule is refused, with what to give, when it is given two
// ways, names no sun, is too far from it, or has no place.
func TestSunScheduleRefusals(t *testing.T) {
	l := newLight(t)
	for _, tt := range []struct{ sched, says string }{
		{`"cron":"0 7 * * *","sun":"sunrise","lat":1,"lon":1`, "give cron or sun, not both"},
		{`"sun":"noon","lat":1,"lon":1`, `unknown event "noon": use sunrise, sunset, dawn or dusk`},
		{`"sun":"sunset","offset":"13h","lat":1,"lon":1`, "more than 12h"},
		{`"sun":"sunset","offset":"soon","lat":1,"lon":1`, "not a duration"},
		{`"sun":"sunset"`, "needs lat and lon"},
		{`"sun":"sunset","lat":91,"lon":1`, "lat"},
		{`"sun":"sunset","lat":1,"lon":1,"tz":"Europe/Paris"`, "takes no tz"},
		{`"cron":"0 7 * * *","offset":"1h"`, "offset, lat and lon go with sun"},
		{`"sun":"dawn","lat":90,"lon":0`, "no dawn at 90,0 within a year"},
	} {
		r := l.apply(messages.InConfig, `{"op":"create_schedule","schedules":[{"name":"s","fires":"x",`+tt.sched+`}]}`)
		if r.Err == nil || r.Err.Code != 400 || !strings.Contains(r.Err.Error, tt.says) {
			t.Errorf("%s: %+v, want 400 saying %s", tt.sched, r.Err, tt.says)
		}
	}
}
