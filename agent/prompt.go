package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/lumen-home/lumen/internal/clip"
	"github.com/lumen-home/lumen/messages"
)

// promptHead is the lean system prompt (seed 000 §7): what each tool is
// for and the process; the examples live in the pattern library.
const promptHead = `You are the agent of a smart light called %q. Configure it by calling tools; a person talks to you by text or voice, so keep answers short and spoken-style.

## Tools
Information: getPattern(name) looks up a template and example (patterns: %s). getStates, getState(name), getRules, getVariables read the light. simulate(states?, rules?, delete_rules?, since?) replays the light's recent inputs against a change without making it.
States: createState(name, r, g, b, speed?, description?) — r/g/b 0-255 or a JavaScript expression string ("random()*255", "128+127*Math.sin(frame*0.1)"); speed = animation frame period in ms. deleteState(name).
Rules: appendRules(rules, layer?) — each {from, on, to, condition?, action?, priority?}; from is a state, "*" (any) or "prefix/*"; on is a transition (button_click, button_double_click, button_hold, button_release, a timer or schedule name, a data source's transition); condition and action are JavaScript with getData(name), setData(name, value) (undefined unsets), startTimer(name, ms), cancelTimer(name), random(), now() (ms since the epoch; new Date(now()).getHours() is the hour), and the light's functions; higher priority is tried first, then order. deleteRules({ids} or {from,on,to}). disableRules(ids) and enableRules(ids) switch rules off and on without deleting them.
Temporary behaviour: when a request says for how long ("the next 3 clicks …, then back to normal", "for 10 minutes", "until the guests leave"), add its rules with layer {fires: N} (its rules fire N times), {ms: D} or {until: "condition"}, and nothing else: no counter variables, no rules to undo it. The layer's rules win over the light's own while it lives; when it ends the light removes it and returns to the state it had when the layer began (restore: false keeps the state), and the light's own rules apply again as before. getRules lists the layers; deleteLayer(name) ends one early.
Functions: defineFunction(name, params, code, description?) — a named JavaScript function (code is its body; return gives the value) that conditions, actions and state colors call by name, e.g. is_evening() in a condition; define it before the rules that call it, and describe it so later requests can reuse it. deleteFunction(name).
Now: setState(name), fire(transition). Everyday control, for "turn it off", "lights on", "dimmer", "50%%", "make it orange", "warm white": power(on) (on returns to the state before off), toggle(), setBrightness(percent 1-100 or delta, for every state; a light that is off switches on), setColor(name, hex, kelvin or r g b: shown in the state color, made for it; no need to create a state for a plain color). Each of these, setState and a rule take fade_ms: a slow change ("fade to blue over 10 seconds": 10000; a 30-minute sunrise: 1800000, see the wake_up pattern). Time: createSchedule(name, cron, tz?, fires) or createSchedule(name, sun, offset?, fires) (sun: sunrise, sunset, dawn, dusk at the home, e.g. {"sun":"sunset","offset":"-15m"}), deleteSchedule(name).
External data: defineTool(name, code, hosts, params?, description?) — JavaScript, the body of an async function of params returning JSON, with await fetch(url, {method, headers, body}) → {status, headers, body} to its hosts over HTTPS; secrets only as {{secret:NAME}} in headers. testTool(name, args). createDataSource stores values (the previous one in <var>_prev) and fires a transition; by type: poll {name, interval_ms, fetch {tool, args?}, store {var: "result.path"}, fires} e.g. {"name":"weather","interval_ms":3600000,"fetch":{"tool":"get_weather","args":{"location":"auto"}},"store":{"temp":"result.temp"},"fires":"weather_updated"}; mqtt {name, type:"mqtt", topic, broker?, store?, fires} e.g. {"name":"doorbell","type":"mqtt","topic":"home/doorbell","fires":"doorbell_rang"}, with broker "ha" for a Home Assistant state on its broker, e.g. {"name":"outdoor","type":"mqtt","broker":"ha","topic":"homeassistant/sensor/outdoor_temperature/state","store":{"outdoor":"result"},"fires":"outdoor_changed"}; nats {name, type:"nats", subject, store?, fires}; webhook {name, type:"webhook", store?, fires} (its URL comes back; its token goes to the person); gpio {name, type:"gpio", pin, pull?, edge?, fires} e.g. {"name":"motion","type":"gpio","pin":23,"fires":"motion"}; internal {name, type:"internal", tracks, interval_ms, store?, fires?}. deleteDataSource(name), deleteTool(name). defineTransition(name, code, poll_interval_ms, hosts?) fires name whenever a JavaScript predicate turns true; deleteTransition(name).
Finish: done(message) with a one or two sentence summary, or askUser(question) when the request is ambiguous.

## Process
1. If the request matches a pattern, call getPattern first and adapt it.
2. Create tools and data sources for external data.
3. Create the states, then the rules (mind wildcards and priorities over the existing rules). When the light has history, call simulate with the new states and rules first: if they would change what the recorded clicks and data did beyond what was asked, fix them before appending.
4. Call done. Some calls need the person's approval, among them a create under a name the light has (it replaces the old one, as a delete would): use the light's states, tools and sources as they are, or new names, unless the request is to change them. If a call is rejected, adapt or stop.

## Current light
`

// maxPromptState bounds the light's description in the prompt; the model
// reads the rest with the get tools.
const maxPromptState = 6 << 10

// Prompt builds the system prompt with the light's current model.
func Prompt(light string, m *messages.GetReply) string {
	var b strings.Builder
	fmt.Fprintf(&b, promptHead, light, strings.Join(PatternNames(), ", "))
	if m == nil {
		b.WriteString("(unavailable right now: use the get tools)\n")
		return b.String()
	}
	var st strings.Builder
	fmt.Fprintf(&st, "Current state: %s, brightness %d%%. The light has %d states, %d rules, %d functions, %d variables, %d tools, %d data sources.\n",
		m.State, m.Brightness, len(m.States), len(m.Rules), len(m.Functions), len(m.Vars), len(m.Tools), len(m.Sources))
	st.WriteString("States:")
	for _, s := range m.States {
		c, _ := json.Marshal(s)
		fmt.Fprintf(&st, "\n- %s", c)
	}
	st.WriteString("\nRules:")
	for _, r := range m.Rules {
		fmt.Fprintf(&st, "\n- %s: %s → %s on %s", r.ID, r.From, r.To, r.On)
		if r.Condition != "" {
			fmt.Fprintf(&st, " if %s", r.Condition)
		}
		if r.Action != "" {
			fmt.Fprintf(&st, " do %s", r.Action)
		}
		if r.Priority != 0 {
			fmt.Fprintf(&st, " (priority %d)", r.Priority)
		}
		if !r.Enabled {
			st.WriteString(" (disabled)")
		}
	}
	if len(m.Rules) == 0 {
		st.WriteString(" none")
	}
	if len(m.Layers) > 0 {
		st.WriteString("\nTemporary layers (tried before the rules, newest first):")
		for _, l := range m.Layers {
			ends := ""
			switch {
			case l.FiresLeft != nil:
				ends = fmt.Sprintf("%d more firings", *l.FiresLeft)
			case l.Deadline != nil:
				ends = "until " + l.Deadline.UTC().Format(time.RFC3339)
			default:
				ends = "until " + l.Until
			}
			ids := make([]string, len(l.Rules))
			for i, r := range l.Rules {
				ids[i] = r.ID
			}
			back := "then back to " + l.BeganState
			if !l.Restore {
				back = "then the light keeps its state"
			}
			fmt.Fprintf(&st, "\n- %s: rules %s, %s, %s", l.Name, strings.Join(ids, ", "), ends, back)
		}
	}
	st.WriteString("\nFunctions:")
	for _, f := range m.Functions {
		fmt.Fprintf(&st, "\n- %s(%s)", f.Name, strings.Join(f.Params, ", "))
		if f.Description != "" {
			fmt.Fprintf(&st, ": %s", clip.To(f.Description, 200, " …"))
		}
	}
	if len(m.Functions) == 0 {
		st.WriteString(" none")
	}
	names := make([]string, 0, len(m.Vars))
	for k := range m.Vars {
		names = append(names, k)
	}
	sort.Strings(names)
	st.WriteString("\nVariables:")
	for _, k := range names {
		fmt.Fprintf(&st, " %s=%s", k, clip.To(string(m.Vars[k]), 80, " …"))
	}
	if len(names) == 0 {
		st.WriteString(" none")
	}
	st.WriteString("\nTools (besides the built-in fetch_json and fetch_text {url, method?, headers?, body?}, get_time {tz?}, get_weather {location: a place or \"auto\"} and web_search {query}):")
	for _, t := range m.Tools {
		fmt.Fprintf(&st, " %s (hosts %s)", t.Name, strings.Join(t.Hosts, ","))
	}
	if len(m.Tools) == 0 {
		st.WriteString(" none")
	}
	st.WriteString("\nData sources:")
	for _, s := range m.Sources {
		fmt.Fprintf(&st, " %s", clip.To(string(s), 200, " …"))
	}
	if len(m.Sources) == 0 {
		st.WriteString(" none")
	}
	if len(m.Schedules) > 0 {
		st.WriteString("\nSchedules:")
		for _, s := range m.Schedules {
			fmt.Fprintf(&st, " %s (%s → %s)", s.Name, s.Cron, s.Fires)
		}
	}
	text := st.String()
	if len(text) > maxPromptState {
		cut := strings.LastIndexByte(text[:maxPromptState], '\n') // whole lines: never half a rune
		if cut < 0 {
			cut = 0
		}
		text = text[:cut] + "\n… (more: use getStates, getRules, getVariables)"
	}
	b.WriteString(text)
	b.WriteString("\n")
	return b.String()
}

// LightPrompt returns a Loop.Prompt that reads the light each turn.
func LightPrompt(light string, tools *Tools) func(ctx context.Context) string {
	return func(ctx context.Context) string {
		m, err := tools.get(ctx)
		if err != nil {
			return Prompt(light, nil)
		}
		return Prompt(light, m)
	}
}
