package describe

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lumen-home/lumen/actors/source/datasource"
	"github.com/lumen-home/lumen/internal/clip"
	"github.com/lumen-home/lumen/messages"
)

// What is coming up for a light: what its get reply says will happen
// by itself (timers, schedules, the end of temporary layers, data
// sources' runs, a fade's end), soonest first, each in words.

// The kinds of Upcoming.
const (
	UpcomingTimer    = "timer"
	UpcomingSchedule = "schedule"
	UpcomingLayer    = "layer"
	UpcomingSource   = "source"
	UpcomingFade     = "fade"
)

// Upcoming is one thing that will happen to a light by itself. At is
// when, nil when it is not a time (a layer that ends after three more
// fires, a source that runs when a message comes); Text says what, and
// never the time itself, which the reader puts in their own zone.
type Upcoming struct {
	At   *time.Time `json:"at,omitempty"`
	Kind string     `json:"kind"`
	Name string     `json:"name"`
	Text string     `json:"text"`
}

// ComingUp is what will happen to the light of g after now, soonest
// first; what has no time comes last, in the order of kinds above.
func ComingUp(g messages.GetReply, now time.Time) []Upcoming {
	var out []Upcoming
	for _, t := range g.Timers {
		at := t.Deadline
		out = append(out, Upcoming{At: &at, Kind: UpcomingTimer, Name: t.Name, Text: "timer " + t.Name + " fires"})
	}
	for _, s := range g.Schedules {
		u := Upcoming{At: s.Next, Kind: UpcomingSchedule, Name: s.Name, Text: "schedule " + Schedule(s)}
		if s.Next == nil {
			u.Text += ": no " + s.Sun + " there within a year"
		}
		out = append(out, u)
	}
	for _, l := range g.Layers {
		out = append(out, layerEnd(l))
	}
	for _, raw := range g.Sources {
		if u, ok := sourceRun(g, raw, now); ok {
			out = append(out, u)
		}
	}
	if f := g.Fade; f != nil {
		if end := f.Start.Add(time.Duration(f.Ms) * time.Millisecond); end.After(now) {
			out = append(out, Upcoming{At: &end, Kind: UpcomingFade, Name: g.State, Text: "the fade into " + g.State + " ends"})
		}
	}
	slices.SortStableFunc(out, func(a, b Upcoming) int {
		switch {
		case a.At == nil && b.At == nil:
			return 0
		case a.At == nil:
			return 1
		case b.At == nil:
			return -1
		}
		if c := a.At.Compare(*b.At); c != 0 {
			return c
		}
		if c := strings.Compare(a.Kind, b.Kind); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// layerEnd says when a temporary layer ends, and what its end does.
func layerEnd(l messages.Layer) Upcoming {
	u := Upcoming{At: l.Deadline, Kind: UpcomingLayer, Name: l.Name, Text: "layer " + l.Name + " ends"}
	switch {
	case l.Deadline != nil:
	case l.FiresLeft != nil && *l.FiresLeft == 0:
		u.Text += " at the next input its rules match"
	case l.FiresLeft != nil && *l.FiresLeft == 1:
		u.Text += " after 1 more fire"
	case l.FiresLeft != nil:
		u.Text += fmt.Sprintf(" after %d more fires", *l.FiresLeft)
	default:
		u.Text += " after an input when " + clip.Line(l.Until, cellWidth, "…")
	}
	if l.Restore && l.BeganState != "" {
		u.Text += ", back to " + l.BeganState
	}
	return u
}

// sourceRun says when a data source runs next: a polled one at its last
// run plus its interval (at once when it never stored one), one that
// waits for a message says what it waits for. A definition that does
// not read is left out.
func sourceRun(g messages.GetReply, raw []byte, now time.Time) (Upcoming, bool) {
	var d datasource.Def
	if err := d.UnmarshalJSON(raw); err != nil {
		return Upcoming{}, false
	}
	u := Upcoming{Kind: UpcomingSource, Name: d.Name}
	what := "source " + d.Name
	switch d.Kind() {
	case datasource.TypeTransition:
		// It stores no run: when it last ran is not known.
		u.Text = fmt.Sprintf("transition %s is checked every %v", d.Name, d.Interval())
	case datasource.TypeNATS:
		u.Text = what + " runs when a message comes on " + d.Subject
	case datasource.TypeMQTT:
		u.Text = what + " runs when an MQTT message comes on " + d.Topic
	case datasource.TypeWebhook:
		u.Text = what + " runs when its webhook is called"
	case datasource.TypeGPIO:
		u.Text = fmt.Sprintf("%s runs on a %s edge of BCM %d", what, d.Edge, *d.Pin)
	default:
		every := fmt.Sprintf(" (every %v)", d.Interval())
		last, ok := g.LastRuns[d.Name]
		next := datasource.Next(d, last, datasource.Seed(g.Light, d.Name))
		switch {
		case !ok || next.IsZero():
			u.At = &now
			u.Text = what + " runs now: it has stored no run yet" + every
		default:
			if next.Before(now) {
				next = now // due: it runs as soon as the light gets to it
			}
			u.At = &next
			u.Text = what + " runs" + every
		}
	}
	if d.Fires != "" {
		u.Text += ", fires " + d.Fires
	}
	return u, true
}
