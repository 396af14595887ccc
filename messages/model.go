package messages

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
)

// State is a named color of the light.
//
//		{"name":"red","r":255,"g":0,"b":0}
//		{"name":"pulse","r":"sin(frame*0.1)*127+128","g":0,"b":0,"speed":33}
//
//	  - name         unique; hierarchical names like "color/red" are allowed.
//	  - r, g, b      0–255, or a JavaScript expression string.
//	  - speed        omitted or null: static; otherwise the frame period in ms.
//	  - description  free text for people and the agent.
type State struct {
	Name        string  `json:"name"`
	R           Channel `json:"r"`
	G           Channel `json:"g"`
	B           Channel `json:"b"`
	Speed       *int    `json:"speed,omitempty"`
	Description string  `json:"description,omitempty"`
}

// Channel is one color channel: a number or a JavaScript expression. On the
// wire it is a JSON number or a JSON string.
type Channel struct {
	Num  float64
	Expr string // non-empty: the channel is an expression
}

// Num returns a numeric channel.
func Num(v float64) Channel { return Channel{Num: v} }

// Expr returns an expression channel.
func Expr(src string) Channel { return Channel{Expr: src} }

// IsExpr reports whether the channel is an expression.
func (c Channel) IsExpr() bool { return c.Expr != "" }

// ParseChannel reads a channel as a person writes it: a number, else a
// JavaScript expression.
func ParseChannel(s string) (Channel, error) {
	if s == "" {
		return Channel{}, fmt.Errorf("a color channel must be a number 0-255 or a JavaScript expression, not an empty string")
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return Channel{Num: f}, nil
	}
	return Channel{Expr: s}, nil
}

// MarshalJSON writes a number or a string.
func (c Channel) MarshalJSON() ([]byte, error) {
	if c.IsExpr() {
		return json.Marshal(c.Expr)
	}
	return strconv.AppendFloat(nil, c.Num, 'f', -1, 64), nil
}

// UnmarshalJSON reads a number or a string. A string that is a plain
// number ("255") is taken as that number.
func (c *Channel) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		ch, err := ParseChannel(s)
		if err == nil {
			*c = ch
		}
		return err
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("a color channel must be a number 0-255 or a JavaScript expression string, got %s", b)
	}
	if math.IsNaN(f) {
		return fmt.Errorf("a color channel must be a number 0-255")
	}
	*c = Channel{Num: f}
	return nil
}

// Rule is one transition rule.
//
//		{"id":"r1","from":"*","on":"button_hold","to":"off","priority":100,"enabled":true}
//
//	  - id         "r<N>", assigned by the light when absent, never reused.
//	  - from       a state name, "*" (any state) or "prefix/*".
//	  - on         the transition name (button_click, a timer's name …).
//	  - to         the destination state.
//	  - condition  optional JavaScript expression; the rule fires only if true.
//	  - action     optional JavaScript run when the rule fires, before the
//	    state changes (setData, startTimer …).
//	  - priority   integer, default 0; higher is tried first, ties in order of
//	    insertion.
//	  - enabled    default true; a disabled rule is never tried.
//
// The seed's names state1, transition and state2 are accepted for from, on
// and to.
type Rule struct {
	ID   string `json:"id,omitempty"`
	From string `json:"from"`
	On   string `json:"on"`
	To   string `json:"to"`
	// FadeMs is the fade into To when the rule fires (0 to MaxFadeMs);
	// 0 leaves it to the light's transition_ms.
	FadeMs    int    `json:"fade_ms,omitempty"`
	Condition string `json:"condition,omitempty"`
	Action    string `json:"action,omitempty"`
	Priority  int    `json:"priority"`
	Enabled   bool   `json:"enabled"`
}

// MaxPriority bounds |priority| so that sorting never overflows and typos
// like 1e12 are caught.
const MaxPriority = 1_000_000

type ruleWire struct {
	ID         string          `json:"id"`
	From       *string         `json:"from"`
	On         *string         `json:"on"`
	To         *string         `json:"to"`
	State1     *string         `json:"state1"`
	Transition *string         `json:"transition"`
	State2     *string         `json:"state2"`
	FadeMs     *int            `json:"fade_ms"`
	Condition  *string         `json:"condition"`
	Action     *string         `json:"action"`
	Priority   json.RawMessage `json:"priority"`
	Enabled    *bool           `json:"enabled"`
}

// UnmarshalJSON reads a rule strictly: unknown fields are an error, the
// seed's aliases are accepted, priority must be an integer, enabled
// defaults to true. An error is a *FieldError naming the field.
func (r *Rule) UnmarshalJSON(b []byte) error {
	var w ruleWire
	if err := Decode(b, &w); err != nil {
		return err
	}
	pick := func(field, alias string, a, b *string) (string, error) {
		switch {
		case a != nil && b != nil && *a != *b:
			return "", &FieldError{Path: alias, Msg: fmt.Sprintf("disagrees with %q, of which it is an alias; give only one", field)}
		case a != nil:
			return *a, nil
		case b != nil:
			return *b, nil
		}
		return "", nil
	}
	var out Rule
	var err error
	out.ID = w.ID
	if out.From, err = pick("from", "state1", w.From, w.State1); err != nil {
		return err
	}
	if out.On, err = pick("on", "transition", w.On, w.Transition); err != nil {
		return err
	}
	if out.To, err = pick("to", "state2", w.To, w.State2); err != nil {
		return err
	}
	if w.FadeMs != nil {
		out.FadeMs = *w.FadeMs
	}
	if w.Condition != nil {
		out.Condition = *w.Condition
	}
	if w.Action != nil {
		out.Action = *w.Action
	}
	if len(w.Priority) > 0 && string(w.Priority) != "null" {
		// A quoted integer ("5") has always been taken.
		digits := string(w.Priority)
		if s, err := strconv.Unquote(digits); err == nil {
			digits = s
		}
		p, err := strconv.ParseInt(digits, 10, 64)
		if err != nil || p > MaxPriority || p < -MaxPriority {
			return &FieldError{Path: "priority", Msg: fmt.Sprintf("must be an integer between %d and %d, not %s", -MaxPriority, MaxPriority, w.Priority)}
		}
		out.Priority = int(p)
	}
	out.Enabled = w.Enabled == nil || *w.Enabled
	*r = out
	return nil
}

// RuleMatch selects rules by from/on/to for delete_rules; empty fields
// match anything, at least one must be set.
type RuleMatch struct {
	From string `json:"from,omitempty"`
	On   string `json:"on,omitempty"`
	To   string `json:"to,omitempty"`
}

// Schedule fires a transition on a cron schedule, or at a time of the
// sun at a place.
//
//		{"name":"evening","cron":"0 19 * * *","tz":"Europe/Paris","fires":"evening"}
//		{"name":"wake","sun":"sunrise","offset":"-30m","lat":48.85,"lon":2.35,"fires":"wake"}
//
//	  - cron   five fields (minute hour day month weekday) or a descriptor
//	    such as "@hourly".
//	  - sun    instead of cron: sunrise, sunset, dawn or dusk (civil: the
//	    sun 6° below the horizon), every day it happens.
//	  - offset with sun: a duration before (-30m) or after (1h15m) it,
//	    at most 12h either way.
//	  - lat, lon  with sun: the place, in degrees. The light's service
//	    fills in the daemon's home (--home) before the input is
//	    journaled, so a replay computes the same times anywhere.
//	  - tz     IANA time zone. The light's service fills in the daemon's
//	    (clock.Zone) before the input is journaled; an input without tz
//	    (journaled before, or published straight to evt.in) is UTC.
//	  - fires  the transition fired at each tick.
//	  - next   (output only) the next tick.
type Schedule struct {
	Name   string     `json:"name"`
	Cron   string     `json:"cron,omitempty"`
	Sun    string     `json:"sun,omitempty"`
	Offset string     `json:"offset,omitempty"`
	Lat    *float64   `json:"lat,omitempty"`
	Lon    *float64   `json:"lon,omitempty"`
	TZ     string     `json:"tz,omitempty"`
	Fires  string     `json:"fires"`
	Next   *time.Time `json:"next,omitempty"`
}

// Zone is the schedule's time zone: its tz, or UTC without one.
func (s Schedule) Zone() string {
	if s.TZ == "" {
		return "UTC"
	}
	return s.TZ
}

// Timer is a pending durable timer: transition Name fires at Deadline
// (RFC 3339).
type Timer struct {
	Name     string    `json:"name"`
	Deadline time.Time `json:"deadline"`
}

// Config is the light's configuration in a get reply as apply takes it,
// so that export | apply round-trips: its initial state as configured
// (not the state it is in), the data sources too (a custom transition is
// a tool and a source, both here) as their canonical definitions, the
// schedules without their next time, which the light computes, and each
// with its zone, UTC too: applied again, a schedule without tz would take
// the daemon's zone.
func (g GetReply) Config() ApplyRequest {
	var scheds []Schedule
	for _, s := range g.Schedules {
		s.Next, s.TZ = nil, s.Zone()
		scheds = append(scheds, s)
	}
	return ApplyRequest{States: g.States, Rules: g.Rules, Vars: g.Vars, Initial: g.Initial, OnState: g.OnState, PowerOn: g.PowerOn, TransitionMs: g.TransitionMs, Room: g.Room, Aliases: g.Aliases, Schedules: scheds, Tools: g.Tools, Sources: g.Sources, Functions: g.Functions, Layers: g.Layers}
}
