package service

// The translation of a request into the input the light journals:
// everything that can be checked without the light's state is checked
// here, so that malformed input is never journaled.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lumen-home/lumen/actors/light"

	"github.com/lumen-home/lumen/actors/source/datasource"
	"github.com/lumen-home/lumen/agent/phrase"
	"github.com/lumen-home/lumen/messages"
)

// badRequest is an input error found before anything is journaled.
type badRequest struct {
	code int
	msg  string
}

func (e *badRequest) Error() string { return e.msg }

func bad(format string, args ...any) error {
	return &badRequest{code: 400, msg: fmt.Sprintf(format, args...)}
}

// checks are what the service checks requests against besides their own
// content: the operator's policy and the daemon's plugins.
type checks struct {
	minInterval time.Duration // of data sources
	plugins     []string      // the operator's plugins' names
	zone        string        // the daemon's IANA time zone (WithZone); "": none
	home        *place        // the daemon's home (WithHome); nil: none
}

// place is a latitude and a longitude, in degrees.
type place struct{ lat, lon float64 }

// zoned gives each schedule without a tz the daemon's zone, so that the
// journaled input names its zone and replay or whatif elsewhere reads the
// same times. The light's machine takes a schedule without tz as UTC: the
// schedules journaled before, and an input published straight to the
// light's inputs. A zone the machine would refuse is refused here, with
// what leaving it out now means.
func (c checks) zoned(list []messages.Schedule) ([]messages.Schedule, error) {
	for i := range list {
		if list[i].Sun != "" {
			if err := c.placed(&list[i]); err != nil {
				return nil, err
			}
			continue
		}
		switch tz := list[i].TZ; {
		case tz == "":
			list[i].TZ = c.zone
		case tz == "Local":
			return nil, bad("schedule %q: tz Local depends on the machine; use an IANA time zone like Europe/Paris, or leave tz out for the daemon's", list[i].Name)
		default:
			if _, err := time.LoadLocation(tz); err != nil {
				return nil, bad("schedule %q: unknown time zone %s; use an IANA time zone like Europe/Paris, or leave tz out for the daemon's", list[i].Name, messages.Clip(tz))
			}
		}
	}
	return list, nil
}

// placed gives a sun schedule without a place the daemon's home, so that
// the journaled input names its place and a replay anywhere computes the
// same times; without a home it is refused with how to set one.
func (c checks) placed(s *messages.Schedule) error {
	switch {
	case (s.Lat == nil) != (s.Lon == nil):
		return bad("schedule %q: give lat and lon together, or neither for the daemon's home", s.Name)
	case s.Lat != nil:
		return nil
	case c.home == nil:
		return bad("schedule %q: a %s schedule needs the place it is at, and the daemon has no home: start it with lumen up --home LAT,LON (or home: {lat: …, lon: …} in lumen.yaml), or give lat and lon", s.Name, messages.Clip(s.Sun))
	}
	lat, lon := c.home.lat, c.home.lon
	s.Lat, s.Lon = &lat, &lon
	return nil
}

// pluginsUsed returns the plugins among the tools the sources fetch with,
// sorted, for the input that creates them (InConfigData.Plugins). A name
// that is also a defined tool is listed all the same: a plugin runs
// instead of a defined tool of its name.
func pluginsUsed(sources []json.RawMessage, plugins []string) []string {
	var used []string
	for _, raw := range sources {
		var d struct {
			Fetch struct {
				Tool string `json:"tool"`
			} `json:"fetch"`
		}
		if json.Unmarshal(raw, &d) != nil || !slices.Contains(plugins, d.Fetch.Tool) || slices.Contains(used, d.Fetch.Tool) {
			continue
		}
		used = append(used, d.Fetch.Tool)
	}
	slices.Sort(used)
	return used
}

// checkSource reads and validates a source definition as far as it can
// be without the light's state (its tool is checked by the light), with
// the operator's minimum interval, and returns its canonical JSON.
func checkSource(raw []byte, minInterval time.Duration) (json.RawMessage, error) {
	// Internal sources get the operator's minimum too: each run journals
	// its values, and an SD card should not pay for a value every second.
	d, err := datasource.Decode(raw, datasource.WithMinInterval(minInterval))
	if err != nil {
		if se := (*datasource.Error)(nil); errors.As(err, &se) {
			return nil, &badRequest{code: se.Code, msg: se.Msg}
		}
		return nil, bad("%v", err)
	}
	switch d.Kind() {
	case datasource.TypePoll, datasource.TypeInternal, datasource.TypeNATS, datasource.TypeWebhook, datasource.TypeMQTT, datasource.TypeTransition, datasource.TypeGPIO:
	default:
		return nil, bad("source %q: type %s is not supported yet; use a poll (interval_ms + fetch), internal (tracks), nats (subject), mqtt (topic) or webhook source", d.Name, d.Kind())
	}
	b, err := json.Marshal(d)
	if err != nil {
		return nil, bad("%v", err)
	}
	return b, nil
}

// translate checks a request body and turns it into an actor message.
// Everything that can be checked without the light's state is checked
// here, so malformed input is never journaled.
func translate(verb string, body []byte) (any, error) {
	return translateWith(verb, body, checks{minInterval: datasource.MinPollInterval})
}

// translateWith is translate with the operator's minimum interval of data
// sources and the daemon's plugins.
func translateWith(verb string, body []byte, c checks) (any, error) {
	d, ok := decoders[verb]
	if !ok {
		return nil, &badRequest{code: 404, msg: "unknown command"}
	}
	return d(body, c)
}

// A decoder checks one verb's body and turns it into the actor's message.
type decoder func(body []byte, c checks) (any, error)

// decoders are the light's verbs (messages.VerbsOf(messages.PartLight)),
// one decoder each.
var decoders = map[string]decoder{
	messages.VerbGet:              decodeGet,
	messages.VerbHistory:          empty(messages.VerbHistory, &HistoryReq{}),
	messages.VerbWhy:              decodeWhy,
	messages.VerbWhatIf:           decodeWhatIf,
	messages.VerbRollback:         decodeRollback,
	messages.VerbListTools:        empty(messages.VerbListTools, &light.ListTools{}),
	messages.VerbIntents:          empty(messages.VerbIntents, &light.ListIntents{}),
	messages.VerbLearnIntent:      func(body []byte, _ checks) (any, error) { return learnIntent(body) },
	messages.VerbDeleteIntent:     decodeDeleteIntent,
	messages.VerbListSources:      empty(messages.VerbListSources, &light.Get{}),
	messages.VerbCreateSource:     decodeCreateSource,
	messages.VerbDefineTransition: func(body []byte, c checks) (any, error) { return defineTransition(body, c.minInterval) },
	messages.VerbFire:             decodeFire,
	messages.VerbSetState:         decodeSetState,
	messages.VerbPower:            decodePower,
	messages.VerbToggle:           decodeToggle,
	messages.VerbSetBrightness:    decodeSetBrightness,
	messages.VerbSetColor:         decodeSetColor,
	messages.VerbApply:            decodeApply,
	messages.VerbCreateState:      decodeCreateState,
	messages.VerbDefineTool:       decodeDefineTool,
	messages.VerbDefineFunction:   decodeDefineFunction,
	messages.VerbDeleteState:      deleteByName(messages.OpDeleteState),
	messages.VerbDeleteSchedule:   deleteByName(messages.OpDeleteSchedule),
	messages.VerbDeleteTool:       deleteByName(messages.OpDeleteTool),
	messages.VerbDeleteSource:     deleteByName(messages.OpDeleteSource),
	messages.VerbDeleteTransition: deleteByName(messages.OpDeleteTransition),
	messages.VerbDeleteFunction:   deleteByName(messages.OpDeleteFunction),
	messages.VerbDeleteLayer:      deleteByName(messages.OpDeleteLayer),
	messages.VerbAppendRules:      decodeAppendRules,
	messages.VerbDeleteRules:      decodeDeleteRules,
	messages.VerbEnableRules:      decodeEnableRules,
	messages.VerbDisableRules:     decodeDisableRules,
	messages.VerbData:             decodeData,
	messages.VerbSetVar:           decodeSetVar,
	messages.VerbCreateSchedule:   decodeCreateSchedule,
	messages.VerbSetNames:         decodeSetNames,
}

// command is the input a mutation journals.
func command(typ string, v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &light.Command{Type: typ, Data: b}, nil
}

// config is the config input of op.
func config(d messages.InConfigData) (any, error) { return command(messages.InConfig, d) }

// body decodes a request into a T; a body it does not take is a 400 that
// ends with how (hint), when there is one.
func body[T any](b []byte, hint string) (T, error) {
	var r T
	if err := messages.Decode(b, &r); err != nil {
		if hint == "" {
			return r, bad("%v", err)
		}
		return r, bad("%v; %s", err, hint)
	}
	return r, nil
}

// empty is the decoder of a verb that takes {}.
func empty(verb string, msg any) decoder {
	return func(b []byte, _ checks) (any, error) {
		if _, err := body[struct{}](b, verb+" takes {}"); err != nil {
			return nil, err
		}
		return msg, nil
	}
}

// oneOrList reads one T, or a list of them in an L ({"states":[…]},
// told by its member list): hint says how to send one.
func oneOrList[T, L any](b []byte, list, hint string, items func(L) []T) ([]T, error) {
	if !hasTopField(b, list) {
		one, err := body[T](b, hint)
		return []T{one}, err
	}
	r, err := body[L](b, "")
	return items(r), err
}

// deleteByName is the decoder of a verb that deletes one thing by name.
func deleteByName(op string) decoder {
	return func(b []byte, _ checks) (any, error) {
		r, err := body[messages.NameRequest](b, `send {"name":"…"}`)
		if err != nil {
			return nil, err
		}
		if r.Name == "" {
			return nil, bad(`"name" is required`)
		}
		return config(messages.InConfigData{Op: op, Name: r.Name})
	}
}

func decodeGet(b []byte, _ checks) (any, error) {
	r, err := body[messages.GetRequest](b, `get takes {}, {"seq":N} or {"at":"2026-11-25T08:00:00Z"}`)
	switch {
	case err != nil:
		return nil, err
	case r.Seq != 0 && r.At != nil:
		return nil, bad(`give seq or at, not both`)
	case r.Seq != 0 || r.At != nil:
		return &GetAt{Seq: r.Seq, At: r.At}, nil
	}
	return &light.Get{}, nil
}

func decodeWhy(b []byte, _ checks) (any, error) {
	r, err := body[messages.WhyRequest](b, `why takes {} (the current state) or {"seq":N}`)
	if err != nil {
		return nil, err
	}
	return &WhyReq{Seq: r.Seq}, nil
}

func decodeWhatIf(b []byte, c checks) (any, error) {
	var r messages.WhatIfRequest
	if err := messages.Decode(b, &r); err != nil || len(r.Config) == 0 {
		return nil, bad(`%v; send {"config":{"states":[…],"rules":[…]}} (the configuration to try, as apply takes it) and "since":"24h" or "from_seq":N`, orMissing(err, "config"))
	}
	q := &WhatIfReq{FromSeq: r.FromSeq, Since: 24 * time.Hour}
	if r.Since != "" {
		if r.FromSeq != 0 {
			return nil, bad("give since or from_seq, not both")
		}
		d, err := time.ParseDuration(r.Since)
		if err != nil || d <= 0 {
			return nil, bad("since %q is not a duration into the past, e.g. 24h or 90m", r.Since)
		}
		q.Since = d
	}
	msg, err := decodeApply(r.Config, c)
	if err != nil {
		return nil, err
	}
	q.Config = msg.(*light.Command).Data
	return q, nil
}

func decodeRollback(b []byte, _ checks) (any, error) {
	var r messages.RollbackRequest
	if err := messages.Decode(b, &r); err != nil || r.Seq == 0 {
		return nil, bad(`%v; send {"seq":N}, the input whose configuration to go back to ('lumen history' lists them)`, orMissing(err, "seq"))
	}
	return &Rollback{Seq: r.Seq}, nil
}

func decodeDeleteIntent(b []byte, _ checks) (any, error) {
	r, err := body[messages.DeleteIntentRequest](b, `send {"phrase":"i'm going to read a book"}`)
	if err != nil {
		return nil, err
	}
	p := phrase.Normal(r.Phrase)
	if p == "" {
		return nil, bad(`"phrase" is required: the words of a learned intent, as 'intents' lists them or as they were said`)
	}
	return command(messages.InIntent, messages.InIntentData{Phrase: p, Delete: true})
}

func decodeCreateSource(b []byte, c checks) (any, error) {
	raw, err := checkSource(b, c.minInterval)
	if err != nil {
		return nil, err
	}
	return config(messages.InConfigData{Op: messages.OpCreateSource, Sources: []json.RawMessage{raw},
		Plugins: pluginsUsed([]json.RawMessage{raw}, c.plugins)})
}

func decodeFire(b []byte, _ checks) (any, error) {
	r, err := body[messages.FireRequest](b, `send {"transition":"button_click"}`)
	switch {
	case err != nil:
		return nil, err
	case r.Transition == "":
		return nil, bad(`"transition" is required, e.g. {"transition":"button_click"}`)
	}
	if err := messages.CheckName("transition", r.Transition); err != nil {
		return nil, bad("%v", err)
	}
	return command(messages.InFired, messages.InFiredData{Transition: r.Transition, Source: "api"})
}

func decodeSetState(b []byte, _ checks) (any, error) {
	r, err := body[messages.SetStateRequest](b, `send {"name":"red"}`)
	switch {
	case err != nil:
		return nil, err
	case r.Name == "":
		return nil, bad(`"name" is required, e.g. {"name":"red"}`)
	}
	if err := messages.CheckName("state", r.Name); err != nil {
		return nil, bad("%v", err)
	}
	if err := fadeMs(r.FadeMs); err != nil {
		return nil, err
	}
	return command(messages.InState, messages.InStateData(r))
}

func decodeApply(b []byte, c checks) (any, error) {
	r, err := body[messages.ApplyRequest](b, "")
	if err != nil {
		return nil, err
	}
	if len(r.States) == 0 && len(r.Rules) == 0 && !r.ConfirmEmpty {
		return nil, bad(`the configuration has no states and no rules: applying it would delete every state, rule, variable, schedule, tool, source and function of the light. Send a configuration (lumen export prints one), or "confirm_empty":true (lumen apply --replace-all) to empty the light on purpose`)
	}
	var sources []json.RawMessage
	for _, raw := range r.Sources {
		b, err := checkSource(raw, c.minInterval)
		if err != nil {
			return nil, err
		}
		sources = append(sources, b)
	}
	if r.State != "" {
		if err := messages.CheckName("state", r.State); err != nil {
			return nil, bad("%v", err)
		}
	}
	// Refused before it is journaled; the light checks and normalises
	// the names again, as given, so that replay does the same.
	if _, _, err := messages.NormalLightNames(r.Room, r.Aliases); err != nil {
		return nil, bad("%v", err)
	}
	varsOp := messages.VarsReplace
	if r.Vars == nil {
		varsOp = messages.VarsKeep
	}
	scheds, err := c.zoned(r.Schedules)
	if err != nil {
		return nil, err
	}
	msg, err := config(messages.InConfigData{Op: messages.OpApply, States: r.States, Rules: r.Rules,
		Vars: r.Vars, VarsOp: varsOp, Initial: r.Initial, OnState: r.OnState, PowerOn: r.PowerOn, TransitionMs: r.TransitionMs, Room: r.Room, Aliases: r.Aliases, State: r.State, Schedules: scheds, Tools: r.Tools, Sources: sources, Functions: r.Functions,
		Layers: r.Layers, Plugins: pluginsUsed(sources, c.plugins)})
	if err == nil {
		// The same input, checked the same way, applied to a copy.
		msg.(*light.Command).DryRun = r.DryRun
		msg.(*light.Command).IfSeq = r.IfSeq
	}
	return msg, err
}

func decodeCreateState(b []byte, _ checks) (any, error) {
	states, err := oneOrList(b, "states", `send a state like {"name":"red","r":255,"g":0,"b":0}`,
		func(r messages.StatesRequest) []messages.State { return r.States })
	switch {
	case err != nil:
		return nil, err
	case len(states) == 0:
		return nil, bad("no state given")
	}
	return config(messages.InConfigData{Op: messages.OpCreateState, States: states})
}

func decodeDefineTool(b []byte, _ checks) (any, error) {
	tools, err := oneOrList(b, "tools", `send a tool like {"name":"get_weather","code":"return {ok: true}","hosts":["api.example.com"]}, or {"tools":[…]}`,
		func(r struct {
			Tools []messages.Tool `json:"tools"`
		}) []messages.Tool {
			return r.Tools
		})
	switch {
	case err != nil:
		return nil, err
	case len(tools) == 0:
		return nil, bad(`no tool given; send {"name":"…","code":"…"} or {"tools":[…]}`)
	}
	return config(messages.InConfigData{Op: messages.OpDefineTool, Tools: tools})
}

func decodeDefineFunction(b []byte, _ checks) (any, error) {
	fns, err := oneOrList(b, "functions", `send a function like {"name":"is_evening","params":["h"],"code":"return h >= 18;"}, or {"functions":[…]}`,
		func(r struct {
			Functions []messages.Function `json:"functions"`
		}) []messages.Function {
			return r.Functions
		})
	switch {
	case err != nil:
		return nil, err
	case len(fns) == 0:
		return nil, bad(`no function given; send {"name":"…","params":[…],"code":"…"} or {"functions":[…]}`)
	}
	return config(messages.InConfigData{Op: messages.OpDefineFunction, Functions: fns})
}

func decodeAppendRules(b []byte, _ checks) (any, error) {
	r, err := body[messages.RulesRequest](b, "")
	switch {
	case err != nil:
		return nil, err
	case len(r.Rules) == 0:
		return nil, bad(`no rules given; send {"rules":[{"from":"off","on":"button_click","to":"red"}]}`)
	}
	if r.Layer != nil {
		if err := r.Layer.Check(); err != nil {
			return nil, bad("%v", err)
		}
	}
	return config(messages.InConfigData{Op: messages.OpAppendRules, Rules: r.Rules, Layer: r.Layer})
}

func decodeDeleteRules(b []byte, _ checks) (any, error) {
	r, err := body[messages.DeleteRulesRequest](b, "")
	if err != nil {
		return nil, err
	}
	var match *messages.RuleMatch
	if r.From != "" || r.On != "" || r.To != "" {
		match = &messages.RuleMatch{From: r.From, On: r.On, To: r.To}
	}
	if len(r.IDs) == 0 && match == nil {
		return nil, bad(`say which rules: {"ids":["r1"]} or any of {"from","on","to"}`)
	}
	return config(messages.InConfigData{Op: messages.OpDeleteRules, IDs: r.IDs, Match: match})
}

// ruleIDs are the ids of enable_rules and disable_rules.
func ruleIDs(ids []string) error {
	if len(ids) == 0 {
		return bad(`"ids" is required: the ids of the rules (get lists them), e.g. {"ids":["r3"]}`)
	}
	return nil
}

func decodeEnableRules(b []byte, _ checks) (any, error) {
	r, err := body[messages.EnableRulesRequest](b, `send {"ids":["r3"]}`)
	if err == nil {
		err = ruleIDs(r.IDs)
	}
	if err != nil {
		return nil, err
	}
	op := messages.OpEnableRules
	if r.Enabled != nil && !*r.Enabled {
		op = messages.OpDisableRules
	}
	return config(messages.InConfigData{Op: op, IDs: r.IDs})
}

func decodeDisableRules(b []byte, _ checks) (any, error) {
	r, err := body[messages.IDsRequest](b, `send {"ids":["r3"]}`)
	if err == nil {
		err = ruleIDs(r.IDs)
	}
	if err != nil {
		return nil, err
	}
	return config(messages.InConfigData{Op: messages.OpDisableRules, IDs: r.IDs})
}

func decodeData(b []byte, _ checks) (any, error) {
	r, err := body[messages.InDataData](b, `send {"source":"weather","vars":{"temperature":12.5}}`)
	switch {
	case err != nil:
		return nil, err
	case r.Source == "":
		return nil, bad(`"source" is required: the data source whose run this is, e.g. {"source":"weather","vars":{"temperature":12.5}}`)
	}
	if _, ok := r.Vars[""]; ok {
		return nil, bad(`a variable in "vars" has an empty name`)
	}
	return command(messages.InData, r)
}

func decodeSetVar(b []byte, _ checks) (any, error) {
	r, err := body[messages.InVarData](b, "")
	switch {
	case err != nil:
		return nil, err
	case r.Name == "":
		return nil, bad(`"name" is required, e.g. {"name":"counter","value":3}`)
	case r.Unset == (r.Value != nil):
		return nil, bad(`give either "value" or "unset":true`)
	}
	if err := messages.CheckName("variable", r.Name); err != nil {
		return nil, bad("%v", err)
	}
	var compact bytes.Buffer
	if json.Compact(&compact, r.Value) == nil {
		if err := messages.CheckValue(r.Name, compact.Bytes()); err != nil {
			return nil, bad("%v", err)
		}
	}
	return command(messages.InVar, r)
}

func decodeCreateSchedule(b []byte, c checks) (any, error) {
	s, err := body[messages.Schedule](b, `send {"name":"evening","cron":"0 19 * * *","tz":"Europe/Paris","fires":"evening"}`)
	if err != nil {
		return nil, err
	}
	if s.Next != nil {
		return nil, bad(`"next" is computed by the light; leave it out`)
	}
	scheds, err := c.zoned([]messages.Schedule{s})
	if err != nil {
		return nil, err
	}
	return config(messages.InConfigData{Op: messages.OpCreateSchedule, Schedules: scheds})
}

func decodeSetNames(b []byte, _ checks) (any, error) {
	r, err := body[messages.NamesRequest](b, `send {"room":"bedroom","aliases":["bedroom lamp","bedside"]}`)
	if err != nil {
		return nil, err
	}
	in, err := r.Input()
	if err != nil {
		return nil, bad("%v", err)
	}
	return config(in)
}

// learnIntent turns learn_intent into an intent input: the phrase in its
// normal form, refused when it ties the request to its moment or context
// (the same words would not mean the same next time), and an action that
// is a set_state, a fire or an everyday-control verb, never a
// configuration change.
func learnIntent(body []byte) (any, error) {
	var r messages.LearnIntentRequest
	if err := messages.Decode(body, &r); err != nil {
		return nil, bad(`%v; send {"phrase":"i'm going to read a book","verb":"set_state","arg":"reading"}`, err)
	}
	p, err := phrase.Learnable(r.Phrase)
	switch {
	case errors.Is(err, phrase.ErrEmpty):
		return nil, bad(`"phrase" is required: the words of the request, more than filler words (please, make it …)`)
	case err != nil:
		return nil, bad("%v", strings.TrimPrefix(err.Error(), "phrase: "))
	case len(p) > messages.MaxPhrase:
		return nil, bad("the phrase is %d bytes long; a phrase is at most %d bytes", len(p), messages.MaxPhrase)
	}
	switch r.Verb {
	case messages.VerbSetState, messages.VerbFire:
		kind := map[string]string{messages.VerbSetState: "state", messages.VerbFire: "transition"}[r.Verb]
		if err := messages.CheckName(kind, r.Arg); err != nil {
			return nil, bad(`"arg": %v`, err)
		}
	default:
		body, err := messages.IntentBody(r.Verb, r.Arg)
		if err != nil {
			return nil, bad(`"verb" and "arg": %v`, err)
		}
		// The verb's own checks (a color it knows, a brightness in range).
		check := map[string]decoder{messages.VerbPower: decodePower, messages.VerbToggle: decodeToggle,
			messages.VerbSetBrightness: decodeSetBrightness, messages.VerbSetColor: decodeSetColor}[r.Verb]
		if b, err := json.Marshal(body); err == nil && check != nil {
			if _, err := check(b, checks{}); err != nil {
				return nil, err
			}
		}
	}
	data, err := json.Marshal(messages.InIntentData{Phrase: p, Verb: r.Verb, Arg: r.Arg})
	if err != nil {
		return nil, bad("%v", err)
	}
	return &light.Command{Type: messages.InIntent, Data: data}, nil
}

// defineTransition turns define_transition into one config input that
// defines the predicate as a tool and its poll as a source of type
// transition, both named after the transition: the tool sandbox runs the
// predicate like any tool (lumen tool run NAME tests it), and the source
// manager polls it.
func defineTransition(body []byte, minInterval time.Duration) (any, error) {
	var r messages.TransitionRequest
	if err := messages.Decode(body, &r); err != nil {
		return nil, bad(`%v; send {"name":"door_open","code":"return (await fetch('https://…')).status === 200","poll_interval_ms":5000}`, err)
	}
	switch {
	case r.Name == "":
		return nil, bad(`"name" is required: the transition to fire, e.g. "door_open"`)
	case r.Code == "":
		return nil, bad(`"code" is required: the body of an async JavaScript function that returns true when %s should fire`, r.Name)
	case r.PollIntervalMs < int(min(minInterval, datasource.MinTransitionInterval).Milliseconds()):
		return nil, bad(`"poll_interval_ms" %d is below the minimum of %d: each poll runs the predicate in a fresh sandbox; poll less often`, r.PollIntervalMs, min(minInterval, datasource.MinTransitionInterval).Milliseconds())
	}
	def, err := json.Marshal(datasource.Def{Name: r.Name, Type: datasource.TypeTransition, IntervalMs: r.PollIntervalMs,
		Fetch: datasource.Fetch{Tool: r.Name, Args: json.RawMessage(`{}`)}, Fires: r.Name})
	if err != nil {
		return nil, bad("%v", err)
	}
	raw, err := checkSource(def, minInterval)
	if err != nil {
		return nil, err
	}
	desc := r.Description
	if desc == "" {
		desc = "the predicate of custom transition " + r.Name
	}
	data, err := json.Marshal(messages.InConfigData{Op: messages.OpDefineTransition, Sources: []json.RawMessage{raw},
		Tools: []messages.Tool{{Name: r.Name, Description: desc, Code: r.Code, Hosts: r.Hosts}}})
	if err != nil {
		return nil, bad("%v", err)
	}
	return &light.Command{Type: messages.InConfig, Data: data}, nil
}

// hasTopField reports whether body is a JSON object with the member name
// at its top level (a tool's code may well contain the word "tools").
func hasTopField(body []byte, name string) bool {
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil {
		return false
	}
	_, ok := obj[name]
	return ok
}

// orMissing is err, or when there is none, that field is missing.
func orMissing(err error, field string) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("%s is missing", field)
}
