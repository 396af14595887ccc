package describe_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/actors/source/datasource"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/describe"
)

func TestComingUp(t *testing.T) {
	now := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { x := now.Add(d); return &x }
	n := func(i int) *int { return &i }
	lat, lon := 48.85, 2.35
	poll := json.RawMessage(`{"name":"weather","interval_ms":600000,"fetch":{"tool":"get_weather"},"store":{"t":"result.temp"},"fires":"weather_updated"}`)
	// When the poll runs next: its last run plus the interval and its
	// jitter, as the source actor computes it.
	var weather datasource.Def
	if err := weather.UnmarshalJSON(poll); err != nil {
		t.Fatal(err)
	}
	lastRun := now.Add(-2 * time.Minute)
	pollNext := datasource.Next(weather, lastRun, datasource.Seed("demo", "weather"))

	type want struct {
		at   *time.Time
		kind string
		text string
	}
	for _, tc := range []struct {
		name  string
		given messages.GetReply
		want  []want
	}{
		{name: "nothing", given: messages.GetReply{Light: "demo"}},
		{
			name:  "a timer",
			given: messages.GetReply{Timers: []messages.Timer{{Name: "t_off", Deadline: *at(90 * time.Second)}}},
			want:  []want{{at(90 * time.Second), describe.UpcomingTimer, "timer t_off fires"}},
		},
		{
			name: "schedules, cron and sun, soonest first",
			given: messages.GetReply{Schedules: []messages.Schedule{
				{Name: "evening", Cron: "0 19 * * *", TZ: "Europe/Paris", Fires: "evening", Next: at(10 * time.Hour)},
				{Name: "wake", Sun: "sunset", Offset: "-30m", Lat: &lat, Lon: &lon, Fires: "wake", Next: at(8 * time.Hour)},
				{Name: "polar", Sun: "sunrise", Lat: &lat, Lon: &lon, Fires: "up"},
			}},
			want: []want{
				{at(8 * time.Hour), describe.UpcomingSchedule, "schedule wake (sunset −30 min, fires wake)"},
				{at(10 * time.Hour), describe.UpcomingSchedule, "schedule evening (0 19 * * * Europe/Paris, fires evening)"},
				{nil, describe.UpcomingSchedule, "schedule polar (sunrise, fires up): no sunrise there within a year"},
			},
		},
		{
			name: "layers: by time, by fires, until",
			given: messages.GetReply{Layers: []messages.Layer{
				{Name: "next3", FiresLeft: n(3), Restore: true, BeganState: "off"},
				{Name: "last", FiresLeft: n(0), Restore: false},
				{Name: "party", Until: "getData('guests') === 0", Restore: true, BeganState: "blue"},
				{Name: "layer1", Deadline: at(10 * time.Minute), Restore: true, BeganState: "off"},
			}},
			want: []want{
				{at(10 * time.Minute), describe.UpcomingLayer, "layer layer1 ends, back to off"},
				{nil, describe.UpcomingLayer, "layer next3 ends after 3 more fires, back to off"},
				{nil, describe.UpcomingLayer, "layer last ends at the next input its rules match"},
				{nil, describe.UpcomingLayer, "layer party ends after an input when getData('guests') === 0, back to blue"},
			},
		},
		{
			name: "sources: polled, never run, pushed",
			given: messages.GetReply{Light: "demo", Sources: []json.RawMessage{
				poll,
				json.RawMessage(`{"name":"motion","type":"mqtt","topic":"home/motion","store":{"m":"result"}}`),
				json.RawMessage(`{"name":"doorbell","type":"webhook","store":{"d":"result"},"fires":"ring"}`),
				json.RawMessage(`{"name":"fresh","type":"internal","tracks":"state_duration"}`),
			}, LastRuns: map[string]time.Time{"weather": lastRun}},
			want: []want{
				{&now, describe.UpcomingSource, "source fresh runs now: it has stored no run yet (every 1m0s)"},
				{&pollNext, describe.UpcomingSource, "source weather runs (every 10m0s), fires weather_updated"},
				{nil, describe.UpcomingSource, "source motion runs when an MQTT message comes on home/motion"},
				{nil, describe.UpcomingSource, "source doorbell runs when its webhook is called, fires ring"},
			},
		},
		{
			name:  "a fade in progress, and one that is over",
			given: messages.GetReply{State: "red", Fade: &messages.Fade{Start: now.Add(-time.Second), Ms: 5000}},
			want:  []want{{at(4 * time.Second), describe.UpcomingFade, "the fade into red ends"}},
		},
		{name: "a fade that is over", given: messages.GetReply{State: "red", Fade: &messages.Fade{Start: now.Add(-time.Minute), Ms: 5000}}},
		{
			name: "every kind: timed soonest first, untimed last",
			given: messages.GetReply{
				State:     "blue",
				Fade:      &messages.Fade{Start: now, Ms: 30000},
				Timers:    []messages.Timer{{Name: "later", Deadline: *at(time.Hour)}},
				Schedules: []messages.Schedule{{Name: "tick", Cron: "*/5 * * * *", TZ: "UTC", Fires: "tick", Next: at(5 * time.Minute)}},
				Layers:    []messages.Layer{{Name: "next1", FiresLeft: n(1), Restore: true, BeganState: "off"}},
				Sources:   []json.RawMessage{json.RawMessage(`{"name":"bus","type":"nats","subject":"home.bus","store":{"b":"result"}}`)},
			},
			want: []want{
				{at(30 * time.Second), describe.UpcomingFade, "the fade into blue ends"},
				{at(5 * time.Minute), describe.UpcomingSchedule, "schedule tick (*/5 * * * * UTC, fires tick)"},
				{at(time.Hour), describe.UpcomingTimer, "timer later fires"},
				{nil, describe.UpcomingLayer, "layer next1 ends after 1 more fire, back to off"},
				{nil, describe.UpcomingSource, "source bus runs when a message comes on home.bus"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := describe.ComingUp(tc.given, now)
			show := func(at *time.Time, kind, text string) string {
				when := "-"
				if at != nil {
					when = at.Sub(now).String()
				}
				return fmt.Sprintf("%s %s %q", when, kind, text)
			}
			var g, w []string
			for _, u := range got {
				g = append(g, show(u.At, u.Kind, u.Text))
			}
			for _, u := range tc.want {
				w = append(w, show(u.at, u.kind, u.text))
			}
			if strings.Join(g, "\n") != strings.Join(w, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(g, "\n"), strings.Join(w, "\n"))
			}
		})
	}
}

func TestScheduleWords(t *testing.T) {
	for _, tc := range []struct {
		given messages.Schedule
		want  string
	}{
		{messages.Schedule{Name: "evening", Cron: "0 19 * * *", TZ: "Europe/Paris", Fires: "evening"}, "evening (0 19 * * * Europe/Paris, fires evening)"},
		{messages.Schedule{Name: "lamps", Sun: "sunset", Fires: "evening"}, "lamps (sunset, fires evening)"},
		{messages.Schedule{Name: "wake", Sun: "sunrise", Offset: "-30m", Fires: "wake"}, "wake (sunrise −30 min, fires wake)"},
		{messages.Schedule{Name: "late", Sun: "dusk", Offset: "1h15m", Fires: "late"}, "late (dusk +1 h 15 min, fires late)"},
		{messages.Schedule{Name: "zero", Sun: "dawn", Offset: "0s", Fires: "z"}, "zero (dawn, fires z)"},
	} {
		if got := describe.Schedule(tc.given); got != tc.want {
			t.Errorf("Schedule(%+v) = %q, want %q", tc.given, got, tc.want)
		}
	}
}
