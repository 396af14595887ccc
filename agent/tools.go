package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/lumen-home/lumen/actors/source/datasource"
	"github.com/lumen-home/lumen/internal/clip"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/wire"
)

// Light is how the agent reaches its light: the very commands a person
// sends on lumen.<light>.cmd.<verb>, so the agent can do nothing a person
// could not. Command returns the reply body of a success; a refusal is a
// *wire.Error (wire.Light is the light over NATS).
type Light interface {
	Command(ctx context.Context, verb string, body []byte) ([]byte, error)
}

// Spec describes one tool to the model.
type Spec struct {
	Name        string
	Description string
	Schema      string // JSON schema of the arguments (an object)
	Tier        string // default tier
}

// Names of the agent's tools.
const (
	ToolGetPattern       = "getPattern"
	ToolGetStates        = "getStates"
	ToolGetState         = "getState"
	ToolGetRules         = "getRules"
	ToolGetVariables     = "getVariables"
	ToolSimulate         = "simulate"
	ToolCreateState      = "createState"
	ToolDeleteState      = "deleteState"
	ToolAppendRules      = "appendRules"
	ToolDeleteRules      = "deleteRules"
	ToolEnableRules      = "enableRules"
	ToolDisableRules     = "disableRules"
	ToolDeleteLayer      = "deleteLayer"
	ToolSetState         = "setState"
	ToolFire             = "fire"
	ToolPower            = "power"
	ToolToggle           = "toggle"
	ToolSetBrightness    = "setBrightness"
	ToolSetColor         = "setColor"
	ToolCreateSchedule   = "createSchedule"
	ToolDeleteSchedule   = "deleteSchedule"
	ToolDefineTool       = "defineTool"
	ToolDeleteTool       = "deleteTool"
	ToolDefineFunction   = "defineFunction"
	ToolDeleteFunction   = "deleteFunction"
	ToolTestTool         = "testTool"
	ToolCreateDataSource = "createDataSource"
	ToolDeleteDataSource = "deleteDataSource"
	ToolDefineTransition = "defineTransition"
	ToolDeleteTransition = "deleteTransition"
	ToolAskUser          = "askUser"
	ToolDone             = "done"
)

// fadeSchema is fade_ms, as the tools that change what the light shows
// and rules take it.
const fadeSchema = `"fade_ms":{"type":"integer","description":"fade into it over this many ms, e.g. 2000, or 1800000 for a 30-minute sunrise; 0 cuts; default the light's transition_ms"}`

// ruleFadeSchema is a rule's fade_ms: 0 there is the light's default.
const ruleFadeSchema = `"fade_ms":{"type":"integer","description":"fade into to over this many ms when the rule fires, e.g. 1800000 for a 30-minute sunrise; 0 or none: the light's transition_ms"}`

const (
	colorSchema = `{"type":["number","string"],"description":"0-255, or a JavaScript expression string such as \"random()*255\" or \"128+127*Math.sin(frame*0.1)\""}`
	ruleSchema  = `{"type":"object","properties":{` +
		`"from":{"type":"string","description":"state name, \"*\" for any state, or \"prefix/*\""},` +
		`"on":{"type":"string","description":"transition name: button_click, button_double_click, button_hold, button_release, a timer or schedule name, a data source's fires …"},` +
		`"to":{"type":"string","description":"destination state (must exist)"},` +
		`"condition":{"type":"string","description":"JavaScript, e.g. getData('count') > 0"},` +
		`"action":{"type":"string","description":"JavaScript run when the rule fires, e.g. setData('count', getData('count') - 1); startTimer('fade', 5000)"},` +
		`"priority":{"type":"integer","description":"higher is tried first; default 0"},` + ruleFadeSchema + `},"required":["from","on","to"]}`
	layerSchema = `{"type":"object","description":"add the rules as a temporary layer that ends by itself: give exactly one of fires, ms, until. While it lives its rules are tried before the light's own; when it ends the light returns to the state it had when the layer began (unless restore is false) and the light's own rules apply again as before.","properties":{` +
		`"name":{"type":"string","description":"optional; default layer<N>"},` +
		`"fires":{"type":"integer","description":"the layer's rules fire this many times; the next input one of them would match then only ends the layer (\"the next 3 clicks\")"},` +
		`"ms":{"type":"integer","description":"the layer ends this many milliseconds from now (\"for 10 minutes\": 600000)"},` +
		`"until":{"type":"string","description":"JavaScript condition: the layer ends after the first input after which it holds, e.g. getData('guests') === 0"},` +
		`"restore":{"type":"boolean","description":"default true: return to the state the light had when the layer began"}}}`
	idsSchema = `{"type":"object","properties":{"ids":{"type":"array","items":{"type":"string"},"description":"rule ids, as getRules lists them"}},"required":["ids"]}`
)

// sourceSchema is createDataSource's: every type's fields, with a type
// discriminator, since a top-level oneOf is refused by some
// OpenAI-compatible servers.
func sourceSchema() string {
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	num := func(desc string) map[string]any { return map[string]any{"type": "integer", "description": desc} }
	return mustJSON(map[string]any{"type": "object", "required": []string{"name"}, "properties": map[string]any{
		"name":        str("[a-z][a-z0-9_]*"),
		"type":        map[string]any{"type": "string", "enum": datasource.Types(), "description": "default poll"},
		"interval_ms": num("poll: at least 10000; internal: at least 10000; transition: at least 1000"),
		"fetch": map[string]any{"type": "object", "description": "poll and transition: the tool to run, e.g. {\"tool\":\"get_weather\",\"args\":{\"location\":\"auto\"}}",
			"properties": map[string]any{"tool": map[string]any{"type": "string"}, "args": map[string]any{"type": "object"}}, "required": []string{"tool"}},
		"store": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"},
			"description": "variable name → path in the result, e.g. {\"temperature\":\"result.temp\"}; for nats, mqtt and webhook the result is the message's JSON body; for gpio {level, edge, at}"},
		"fires":       str("transition fired after each update or message"),
		"subject":     str("nats: the NATS subject, e.g. sensors.kitchen"),
		"topic":       str("mqtt: the MQTT topic, e.g. home/doorbell (+ and # wildcards)"),
		"broker":      map[string]any{"type": "string", "enum": []string{datasource.BrokerLumen, datasource.BrokerHA}, "description": "mqtt: lumen (default): lumen's own MQTT listener; ha: Home Assistant's broker, e.g. a state mqtt_statestream publishes, homeassistant/sensor/outdoor_temperature/state"},
		"pin":         num("gpio: the BCM pin number, e.g. 23"),
		"pull":        map[string]any{"type": "string", "enum": []string{"none", "up", "down"}, "description": "gpio: the pin's bias (default none)"},
		"edge":        map[string]any{"type": "string", "enum": []string{"rising", "falling", "both"}, "description": "gpio: which edges fire (default rising)"},
		"debounce_ms": num("gpio: debounce window"),
		"tracks":      map[string]any{"type": "string", "enum": datasource.Tracks(), "description": "internal: what to track"},
	}})
}

// SpeakDirectly is the argument by which the model says a call's short
// confirmation answers the person by itself (seed 004's "send output
// directly to TTS"): the request ends without another model call. A
// failure goes back to the model as usual.
const SpeakDirectly = "speak_directly"

// tool is one of the agent's tools: everything the agent knows of it.
type tool struct {
	Spec            // what the model reads of it
	direct     bool // it takes SpeakDirectly
	readOnly   bool // it changes nothing
	idempotent bool // run twice with the same arguments, it leaves the light the same (it creates or replaces by name)
	undoesOwn  bool // it only switches rules or ends a layer: autonomous on the request's own (ownChange)
	// verb is the light's verb it sends its arguments to, as they are;
	// "" when run runs it.
	verb    string
	run     func(t *Tools, ctx context.Context, args json.RawMessage) (json.RawMessage, error)
	confirm func(c messages.ToolStep) string // the sentence that says it is done; nil: "Done."
	// replaces is what a create replaces, whose delete's tier it then
	// needs (replace.go); nil: it creates nothing.
	replaces *replacer
}

// tools is the table by name, made once: its rows never change.
var tools = sync.OnceValue(func() map[string]tool {
	m := map[string]tool{}
	for _, t := range toolTable() {
		m[t.Name] = t
	}
	return m
})

// toolOf is name's row.
func toolOf(name string) (tool, bool) {
	t, ok := tools()[name]
	return t, ok
}

// readOnly tools change nothing.
func readOnly(name string) bool { return tools()[name].readOnly }

// idempotent tools leave the light the same when run twice with the
// same arguments (they create or replace by name), so a restart may
// simply run them again.
func idempotent(name string) bool { return tools()[name].idempotent }

// Specs returns the agent's tools, in the order the model sees them.
func Specs() []Spec {
	table := toolTable()
	specs := make([]Spec, len(table))
	for i, t := range table {
		specs[i] = t.Spec
		if !t.direct {
			continue
		}
		var schema map[string]any
		if err := json.Unmarshal([]byte(t.Schema), &schema); err != nil {
			panic(fmt.Sprintf("agent: schema of %s: %v", t.Name, err)) // a build defect, caught by every test
		}
		props, _ := schema["properties"].(map[string]any)
		props[SpeakDirectly] = map[string]any{"type": "boolean",
			"description": "true when this call alone answers the person (e.g. \"make it red\"): its short confirmation is said and you are not called again; errors still come back to you"}
		specs[i].Schema = mustJSON(schema)
	}
	return specs
}

// toolTable is every tool of the agent, one row each, in the order the
// model sees them: the lists, the dispatch of Run, the tiers, the
// confirmations and what a create replaces all come from it.
func toolTable() []tool {
	return slices.Concat(baseTools(), controlTools(), endTools())
}

// baseTools are the table's rows before everyday control.
func baseTools() []tool {
	return []tool{
		{Spec: Spec{ToolGetPattern, "Look up a behaviour pattern: its template and a worked example. Patterns: " + strings.Join(PatternNames(), ", ") + ".",
			`{"type":"object","properties":{"name":{"type":"string","enum":` + mustJSON(PatternNames()) + `}},"required":["name"]}`, messages.TierAutonomous},
			readOnly: true, run: runGetPattern},
		{Spec: Spec{ToolGetStates, "List the light's states with their colors.", `{"type":"object","properties":{}}`, messages.TierAutonomous},
			readOnly: true, run: runGetStates},
		{Spec: Spec{ToolGetState, "Show one state's definition.", `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`, messages.TierAutonomous},
			readOnly: true, direct: true, run: runGetState, confirm: confirmGetState},
		{Spec: Spec{ToolGetRules, "List the light's rules with their ids.", `{"type":"object","properties":{}}`, messages.TierAutonomous},
			readOnly: true, run: runGetRules},
		{Spec: Spec{ToolGetVariables, "Show the light's variables (set by rules with setData and by data sources).", `{"type":"object","properties":{}}`, messages.TierAutonomous},
			readOnly: true, direct: true, run: runGetVariables, confirm: confirmGetVariables},
		{Spec: Spec{ToolSimulate, "Check a change against the light's recorded history without making it: replays the inputs of the last `since` (default 24h: clicks, data, variables) against the current configuration plus these states and rules, minus delete_rules, and says how many inputs would leave the light in another state, with the first differences. Changes nothing.",
			`{"type":"object","properties":{"states":{"type":"array","items":{"type":"object"},"description":"states to add or replace, as createState takes them"},"rules":{"type":"array","items":` + ruleSchema + `,"description":"rules to add, as appendRules takes them"},"delete_rules":{"type":"array","items":{"type":"string"},"description":"ids of rules to leave out"},"since":{"type":"string","description":"how far back, e.g. 24h, 90m"}}}`, messages.TierAutonomous},
			readOnly: true, run: (*Tools).simulate},
		// The creates below take their delete's tier when they replace
		// one of the light's (replace.go).
		{Spec: Spec{ToolCreateState, "Create or replace a named light state.",
			`{"type":"object","properties":{"name":{"type":"string"},"r":` + colorSchema + `,"g":` + colorSchema + `,"b":` + colorSchema +
				`,"speed":{"type":"integer","description":"animation frame period in ms; omit for a static color"},"description":{"type":"string"}},"required":["name","r","g","b"]}`, messages.TierAutonomous},
			direct: true, idempotent: true, verb: messages.VerbCreateState, confirm: confirmCreateState,
			replaces: &replacer{what: "state", delete: ToolDeleteState, list: "states", makers: []string{ToolCreateState},
				exists: func(m *messages.GetReply) []string {
					return namesOf(m.States, func(s messages.State) string { return s.Name })
				}}},
		{Spec: Spec{ToolDeleteState, "Delete a state (rules that use it must be deleted first).", `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`, messages.TierConfirm},
			verb: messages.VerbDeleteState},
		{Spec: Spec{ToolAppendRules, "Add transition rules after the existing ones; with layer, as a temporary layer that ends by itself (after N firings, a duration, or a condition) and puts the light back as it was.",
			`{"type":"object","properties":{"rules":{"type":"array","items":` + ruleSchema + `},"layer":` + layerSchema + `},"required":["rules"]}`, messages.TierAutonomous},
			direct: true, verb: messages.VerbAppendRules, confirm: confirmAppendRules},
		{Spec: Spec{ToolDeleteRules, "Delete rules by id, or every rule matching from/on/to.",
			`{"type":"object","properties":{"ids":{"type":"array","items":{"type":"string"}},"from":{"type":"string"},"on":{"type":"string"},"to":{"type":"string"}}}`, messages.TierConfirm},
			verb: messages.VerbDeleteRules},
		// Confirm, except on rules and layers the same request created (Tier).
		{Spec: Spec{ToolEnableRules, "Enable rules again by id (the light's own or a layer's).", idsSchema, messages.TierConfirm},
			idempotent: true, undoesOwn: true, verb: messages.VerbEnableRules},
		{Spec: Spec{ToolDisableRules, "Disable rules by id without deleting them: they stay, with their ids, but are never tried until enabled again.", idsSchema, messages.TierConfirm},
			idempotent: true, undoesOwn: true, verb: messages.VerbDisableRules},
		{Spec: Spec{ToolDeleteLayer, "End a temporary layer now (the light returns to the state the layer began in, if it restores).",
			`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`, messages.TierConfirm},
			undoesOwn: true, verb: messages.VerbDeleteLayer},
		{Spec: Spec{ToolSetState, "Change the light to a state now.", `{"type":"object","properties":{"name":{"type":"string"},` + fadeSchema + `,` + lightSchema + `},"required":["name"]}`, messages.TierAutonomous},
			direct: true, idempotent: true, verb: messages.VerbSetState, confirm: confirmSetState},
		{Spec: Spec{ToolFire, "Fire a transition now (button_click, a timer's or a data source's transition), as the button or the timer would.", `{"type":"object","properties":{"transition":{"type":"string"},` + lightSchema + `},"required":["transition"]}`, messages.TierAutonomous},
			direct: true, verb: messages.VerbFire, confirm: confirmFire},
	}
}

// endTools are the table's rows after everyday control.
func endTools() []tool {
	return []tool{
		{Spec: Spec{ToolCreateSchedule, "Fire a transition on a cron schedule (minute hour day month weekday), in a time zone (default the light's); or by the sun at the home: sunrise, sunset, dawn or dusk, with an offset.",
			`{"type":"object","properties":{"name":{"type":"string"},"cron":{"type":"string","description":"e.g. \"0 19 * * *\" for 19:00 every day"},"tz":{"type":"string","description":"IANA zone such as Europe/Paris"},` +
				`"sun":{"type":"string","enum":["sunrise","sunset","dawn","dusk"],"description":"instead of cron: every day at this time of the sun"},"offset":{"type":"string","description":"with sun: e.g. -30m (before), 1h (after); at most 12h"},` +
				`"fires":{"type":"string"}},"required":["name","fires"]}`, messages.TierAutonomous},
			direct: true, idempotent: true, verb: messages.VerbCreateSchedule, confirm: confirmCreateSchedule,
			replaces: &replacer{what: "schedule", delete: ToolDeleteSchedule, makers: []string{ToolCreateSchedule},
				exists: func(m *messages.GetReply) []string {
					return namesOf(m.Schedules, func(s messages.Schedule) string { return s.Name })
				}}},
		{Spec: Spec{ToolDeleteSchedule, "Delete a schedule.", `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`, messages.TierConfirm},
			verb: messages.VerbDeleteSchedule},
		{Spec: Spec{ToolDefineTool, "Define a custom tool: JavaScript run in a sandbox, the body of an async function of params that returns JSON; it may await fetch(url, {method, headers, body}) to the hosts it lists (HTTPS). Refer to secrets as {{secret:NAME}} in headers.",
			`{"type":"object","properties":{"name":{"type":"string","description":"[a-z][a-z0-9_]*"},"description":{"type":"string"},"params":{"type":"object","description":"JSON schema of its arguments"},"code":{"type":"string"},"returns":{"type":"object"},"hosts":{"type":"array","items":{"type":"string"}}},"required":["name","code"]}`, messages.TierConfirm},
			idempotent: true, verb: messages.VerbDefineTool,
			replaces: &replacer{what: "tool", delete: ToolDeleteTool, list: "tools", makers: []string{ToolDefineTool, ToolDefineTransition},
				exists: func(m *messages.GetReply) []string {
					return namesOf(m.Tools, func(t messages.Tool) string { return t.Name })
				}}},
		{Spec: Spec{ToolDeleteTool, "Delete a custom tool.", `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`, messages.TierConfirm},
			verb: messages.VerbDeleteTool},
		// Autonomous: a function is JavaScript of the light's own, which reaches nothing a rule cannot.
		{Spec: Spec{ToolDefineFunction, "Define (or replace) a custom function the light's rule conditions, actions and state colors can call by name: the body of a JavaScript function of params, with getData, random(), now() (ms) and the other functions; return gives the value. Only actions may setData or startTimer through it.",
			`{"type":"object","properties":{"name":{"type":"string","description":"a JavaScript name such as is_evening; not a built-in's"},"params":{"type":"array","items":{"type":"string"},"description":"parameter names, in order"},"code":{"type":"string","description":"the function's body, e.g. return new Date(now()).getHours() >= 18;"},"description":{"type":"string","description":"what it returns, for later requests"}},"required":["name","code"]}`, messages.TierAutonomous},
			idempotent: true, verb: messages.VerbDefineFunction,
			replaces: &replacer{what: "function", delete: ToolDeleteFunction, list: "functions", makers: []string{ToolDefineFunction},
				exists: func(m *messages.GetReply) []string {
					return namesOf(m.Functions, func(f messages.Function) string { return f.Name })
				}}},
		{Spec: Spec{ToolDeleteFunction, "Delete a custom function (rules, states and functions that call it must be changed first).", `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`, messages.TierConfirm},
			verb: messages.VerbDeleteFunction},
		{Spec: Spec{ToolTestTool, "Run a tool once with arguments and see its result.",
			`{"type":"object","properties":{"name":{"type":"string"},"args":{"type":"object"}},"required":["name"]}`, messages.TierAutonomous},
			direct: true, verb: messages.VerbRunTool, confirm: confirmTestTool},
		{Spec: Spec{ToolCreateDataSource, "Create (or replace) a data source: something that stores values in variables (the previous value stays in <var>_prev) and fires a transition. " +
			"By type: poll runs a tool every interval_ms (fetch {tool, args}); internal tracks the light itself every interval_ms; nats, mqtt and webhook fire on each message (its JSON body is the result); gpio fires on an input pin's edge; transition polls a tool and fires when its result turns truthy. " +
			"A webhook gets a URL and a secret token, which go to the person; you are told the URL.", sourceSchema(), messages.TierAutonomous},
			run: (*Tools).createSource,
			replaces: &replacer{what: "data source", delete: ToolDeleteDataSource, makers: []string{ToolCreateDataSource, ToolDefineTransition},
				exists: func(m *messages.GetReply) []string { return sourceNames(m, false) }}},
		{Spec: Spec{ToolDeleteDataSource, "Delete a data source.", `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`, messages.TierConfirm},
			verb: messages.VerbDeleteSource},
		{Spec: Spec{ToolDefineTransition, "Define a custom transition: a JavaScript predicate (the body of an async function returning true or false, which may await fetch to its hosts) polled every poll_interval_ms; the transition fires each time it turns true.",
			`{"type":"object","properties":{"name":{"type":"string","description":"the transition's name, [a-z][a-z0-9_]*"},"code":{"type":"string"},"poll_interval_ms":{"type":"integer","description":"at least 1000"},"hosts":{"type":"array","items":{"type":"string"}},"description":{"type":"string"}},"required":["name","code","poll_interval_ms"]}`, messages.TierConfirm},
			verb: messages.VerbDefineTransition,
			replaces: &replacer{what: "custom transition", delete: ToolDeleteTransition, makers: []string{ToolDefineTransition},
				exists: func(m *messages.GetReply) []string { return sourceNames(m, true) }}},
		{Spec: Spec{ToolDeleteTransition, "Delete a custom transition.", `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`, messages.TierConfirm},
			verb: messages.VerbDeleteTransition},
		{Spec: Spec{ToolAskUser, "Ask the person a question when the request is ambiguous; ends this request.", `{"type":"object","properties":{"question":{"type":"string"}},"required":["question"]}`, messages.TierAutonomous},
			run: runAskUser},
		{Spec: Spec{ToolDone, "Finish: say what you did, in one or two short sentences.", `{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`, messages.TierAutonomous},
			run: runDone},
	}
}

func (t *Tools) specList() []Spec {
	t.once.Do(func() { t.specs = Specs() })
	return t.specs
}

func (t *Tools) specOf(name string) (Spec, bool) {
	row, ok := toolOf(name)
	return row.Spec, ok
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// maxResult bounds a tool result given back to the model.
const maxResult = 8 << 10

// Tools runs the agent's tool calls against a light.
type Tools struct {
	Light Light
	// House, when set, reaches the other lights requests may name
	// (route.go); nil: this light only.
	House     House
	Forbidden []string // tools the operator forbids
	// Changed, when set, reports whether the light's states or learned
	// intents may have changed since it was last called (a
	// wire.Changes over the light's config and intent outputs): direct
	// commands then read the light again, and otherwise match against
	// what they read last. Nil: they read the light for every request.
	Changed func() bool

	once  sync.Once
	specs []Spec

	mu    sync.Mutex
	known *directory // what direct commands match against; nil: read it
}

// directory is what a request is matched against to be a direct
// command: the light's states and learned intents.
type directory struct {
	states  []string
	intents []messages.Intent
	self    Named // the light as requests name it
}

// directory returns the light's states and intents, read again only
// when they may have changed (Changed).
func (t *Tools) directory(ctx context.Context) (*directory, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	// Changed first: a change that comes while the light is read is
	// seen by the next call.
	if t.Changed == nil || t.Changed() || t.known == nil {
		t.known = nil
		m, err := t.get(ctx)
		if err != nil {
			return nil, err
		}
		d := &directory{states: make([]string, len(m.States)), intents: m.Intents}
		for i, s := range m.States {
			d.states[i] = s.Name
		}
		d.self = Named{Light: m.Light, Room: m.Room, Aliases: m.Aliases, States: d.states}
		if t.Changed != nil {
			t.known = d
		}
		return d, nil
	}
	return t.known, nil
}

// errArgs is a tool call whose arguments the model got wrong.
var errArgs = errors.New("agent: bad arguments")

// Tier says how much permission a call needs: a tool's own tier, raised
// to confirm for a data source that reaches a host no existing source
// reaches, or a test call to a host neither the sources nor the light's
// (approved) tools reach, raised to the delete tool's tier for a create
// that replaces something of the light the request did not make,
// lowered to autonomous for switching rules or ending a layer that the
// request itself created (done are its calls so far), and forbidden if
// the operator says so.
func (t *Tools) Tier(ctx context.Context, name string, args json.RawMessage, done []messages.ToolStep) string {
	tier, _ := t.Permission(ctx, name, args, done)
	return tier
}

// Permission is Tier with, when a create replaces something, what it
// replaces in words for the person who approves it ("" otherwise).
func (t *Tools) Permission(ctx context.Context, name string, args json.RawMessage, done []messages.ToolStep) (tier, note string) {
	tier = t.baseTier(ctx, name, args, done)
	if tier == messages.TierForbidden {
		return tier, ""
	}
	rt, note := t.replaces(ctx, name, args, done)
	return stricter(tier, rt), note
}

// baseTier is Tier but for what a create replaces.
func (t *Tools) baseTier(ctx context.Context, name string, args json.RawMessage, done []messages.ToolStep) string {
	if slices.Contains(t.Forbidden, name) {
		return messages.TierForbidden
	}
	s, ok := t.specOf(name)
	if !ok {
		return messages.TierAutonomous // unknown: fails without effect
	}
	if s.Tier == messages.TierConfirm && ownChange(name, args, done) {
		return messages.TierAutonomous
	}
	if s.Tier != messages.TierAutonomous {
		return s.Tier
	}
	var fetch struct {
		Tool string          `json:"tool"`
		Args json.RawMessage `json:"args"`
	}
	switch name {
	case ToolCreateDataSource:
		var def struct {
			Fetch *json.RawMessage `json:"fetch"`
		}
		if json.Unmarshal(args, &def) != nil || def.Fetch != nil && json.Unmarshal(*def.Fetch, &fetch) != nil {
			return messages.TierConfirm
		}
	case ToolTestTool:
		var call struct {
			Name string          `json:"name"`
			Args json.RawMessage `json:"args"`
		}
		if json.Unmarshal(args, &call) != nil {
			return messages.TierConfirm
		}
		fetch.Tool, fetch.Args = call.Name, call.Args
	default:
		return s.Tier
	}
	if hosts, err := t.newHosts(ctx, fetch.Tool, fetch.Args, name == ToolTestTool); err != nil || len(hosts) > 0 {
		return messages.TierConfirm
	}
	return s.Tier
}

// ownChange reports whether a call switches only rules, or ends only a
// layer, that calls of done (the same request) created: undoing or
// adjusting its own work needs no approval.
func ownChange(name string, args json.RawMessage, done []messages.ToolStep) bool {
	if !tools()[name].undoesOwn {
		return false
	}
	rules, layers := map[string]bool{}, map[string]bool{}
	for _, c := range done {
		if !c.OK || c.Tool != ToolAppendRules {
			continue
		}
		var r struct {
			Config messages.OutConfigData `json:"config"`
		}
		if json.Unmarshal(c.Result, &r) != nil {
			continue
		}
		for _, id := range r.Config.Rules {
			rules[id] = true
		}
		for _, l := range r.Config.Layers {
			layers[l] = true
		}
	}
	var a struct {
		IDs  []string `json:"ids"`
		Name string   `json:"name"`
	}
	if json.Unmarshal(args, &a) != nil {
		return false
	}
	if name == ToolDeleteLayer {
		return a.Name != "" && layers[a.Name]
	}
	if len(a.IDs) == 0 {
		return false
	}
	for _, id := range a.IDs {
		if !rules[id] {
			return false
		}
	}
	return true
}

// newHosts lists the hosts a run of tool with args would reach (the
// tool's hosts, or a built-in fetch's URL) that no existing source
// reaches, nor, with byTools, any of the light's tools.
func (t *Tools) newHosts(ctx context.Context, tool string, args json.RawMessage, byTools bool) ([]string, error) {
	model, err := t.get(ctx)
	if err != nil {
		return nil, err
	}
	hostsOf := func(tool string, args json.RawMessage) []string {
		for _, tl := range model.Tools {
			if tl.Name == tool {
				return tl.Hosts
			}
		}
		var a struct {
			URL string `json:"url"`
		}
		if json.Unmarshal(args, &a) == nil && a.URL != "" {
			if u, err := url.Parse(a.URL); err == nil && u.Host != "" {
				return []string{u.Host}
			}
		}
		return nil
	}
	known := map[string]bool{}
	for _, raw := range model.Sources {
		var s struct {
			Fetch struct {
				Tool string          `json:"tool"`
				Args json.RawMessage `json:"args"`
			} `json:"fetch"`
		}
		if json.Unmarshal(raw, &s) == nil {
			for _, h := range hostsOf(s.Fetch.Tool, s.Fetch.Args) {
				known[h] = true
			}
		}
	}
	if byTools {
		for _, tl := range model.Tools {
			for _, h := range tl.Hosts {
				known[h] = true
			}
		}
	}
	var fresh []string
	for _, h := range hostsOf(tool, args) {
		if !known[h] {
			fresh = append(fresh, h)
		}
	}
	return fresh, nil
}

func (t *Tools) get(ctx context.Context) (*messages.GetReply, error) {
	m, err := wire.Typed[messages.GetReply](ctx, t.Light, messages.VerbGet, nil)
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// Run executes one call and returns its result for the model. An error
// is for the model too: it says what was wrong so the model can retry.
func (t *Tools) Run(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	var a map[string]json.RawMessage
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage(`{}`)
	}
	if err := json.Unmarshal(args, &a); err != nil || a == nil {
		spec, _ := t.specOf(name)
		return nil, fmt.Errorf("%w: the arguments of %s are not a JSON object (%v); call it again with arguments matching %s", errArgs, name, errText(err), spec.Schema)
	}
	if _, ok := a[SpeakDirectly]; ok { // for the loop, not the light
		delete(a, SpeakDirectly)
		args, _ = json.Marshal(a)
	}
	row, ok := toolOf(name)
	switch {
	case !ok:
		names := make([]string, 0, len(t.specList()))
		for _, s := range t.specList() {
			names = append(names, s.Name)
		}
		return nil, fmt.Errorf("%w: there is no tool %q; the tools are %s", errArgs, name, strings.Join(names, ", "))
	case routable(name) && a[lightArg] != nil:
		var target string
		if err := json.Unmarshal(a[lightArg], &target); err != nil {
			return nil, fmt.Errorf("%w: %s's %q is a string: a light's name, room:NAME, group:NAME or all", errArgs, name, lightArg)
		}
		delete(a, lightArg)
		args, _ = json.Marshal(a)
		d, err := t.directory(ctx)
		if err != nil {
			return nil, err
		}
		if target == "" || target == d.self.Light {
			return t.command(ctx, row.verb, args)
		}
		return t.routed(ctx, d, row.verb, target, args)
	case row.verb != "":
		return t.command(ctx, row.verb, args)
	}
	return row.run(t, ctx, args)
}

// stringArg is args' key, a non-empty string, for tool name.
func stringArg(name string, args json.RawMessage, key string) (string, error) {
	var a map[string]json.RawMessage
	_ = json.Unmarshal(args, &a)
	var s string
	if err := json.Unmarshal(a[key], &s); err != nil || s == "" {
		return "", fmt.Errorf("%w: %s needs %q, a non-empty string", errArgs, name, key)
	}
	return s, nil
}

func runGetPattern(_ *Tools, _ context.Context, args json.RawMessage) (json.RawMessage, error) {
	n, err := stringArg(ToolGetPattern, args, "name")
	if err != nil {
		return nil, err
	}
	p, ok := PatternByName(n)
	if !ok {
		return nil, fmt.Errorf("%w: no pattern %q; the patterns are %s", errArgs, n, strings.Join(PatternNames(), ", "))
	}
	return json.Marshal(p)
}

func runGetStates(t *Tools, ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
	m, err := t.get(ctx)
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"current": m.State, "states": m.States})
}

func runGetRules(t *Tools, ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
	m, err := t.get(ctx)
	if err != nil {
		return nil, err
	}
	if len(m.Layers) > 0 {
		return json.Marshal(map[string]any{"rules": m.Rules, "layers": m.Layers})
	}
	return json.Marshal(map[string]any{"rules": m.Rules})
}

func runGetVariables(t *Tools, ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
	m, err := t.get(ctx)
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"vars": m.Vars})
}

func runGetState(t *Tools, ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	m, err := t.get(ctx)
	if err != nil {
		return nil, err
	}
	n, err := stringArg(ToolGetState, args, "name")
	if err != nil {
		return nil, err
	}
	for _, s := range m.States {
		if s.Name == n {
			return json.Marshal(s)
		}
	}
	names := make([]string, 0, len(m.States))
	for _, s := range m.States {
		names = append(names, s.Name)
	}
	sort.Strings(names)
	return nil, &wire.Error{Code: 404, Msg: fmt.Sprintf("no state %q; the states are %s", n, strings.Join(names, ", "))}
}

func runAskUser(_ *Tools, _ context.Context, args json.RawMessage) (json.RawMessage, error) {
	q, err := stringArg(ToolAskUser, args, "question")
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]string{"question": q})
}

func runDone(_ *Tools, _ context.Context, args json.RawMessage) (json.RawMessage, error) {
	msg, err := stringArg(ToolDone, args, "message")
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]string{"message": msg})
}

// command sends a command and trims the light's reply to what helps the
// model: the outputs' bodies are noise to it, except what a
// configuration change did (config: the ids of the rules it added, the
// layer) and how a layer ended (layer).
func (t *Tools) command(ctx context.Context, verb string, args json.RawMessage) (json.RawMessage, error) {
	b, err := t.Light.Command(ctx, verb, args)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) == nil {
		var outs []messages.Envelope
		_ = json.Unmarshal(m["outputs"], &outs)
		delete(m, "outputs")
		delete(m, "seq")
		for _, o := range outs {
			if o.Type == messages.OutConfig || o.Type == messages.OutLayer {
				m[o.Type] = o.Data
			}
		}
		if nb, err := json.Marshal(m); err == nil {
			b = nb
		}
	}
	return boundResult(b), nil
}

// boundResult bounds a result for the model, keeping it valid JSON.
func boundResult(b []byte) json.RawMessage {
	if len(b) <= maxResult {
		return b
	}
	s, _ := json.Marshal(map[string]string{"truncated": clip.To(string(b), maxResult, " …")})
	return s
}

func errText(err error) string {
	if err == nil {
		return "null"
	}
	return err.Error()
}

// simulate asks the light what the current configuration with the
// proposed states and rules would have done with its recent inputs.
func (t *Tools) simulate(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	var a struct {
		States      []messages.State `json:"states"`
		Rules       []messages.Rule  `json:"rules"`
		DeleteRules []string         `json:"delete_rules"`
		Since       string           `json:"since"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, fmt.Errorf("%w: simulate takes {states?, rules?, delete_rules?, since?}: %v", errArgs, err)
	}
	m, err := t.get(ctx)
	if err != nil {
		return nil, err
	}
	cfg := m.Config()
	cfg.Vars, cfg.Initial = nil, ""
	for _, s := range a.States {
		if i := slices.IndexFunc(cfg.States, func(c messages.State) bool { return c.Name == s.Name }); i >= 0 {
			cfg.States[i] = s
		} else {
			cfg.States = append(cfg.States, s)
		}
	}
	cfg.Rules = slices.DeleteFunc(cfg.Rules, func(r messages.Rule) bool { return slices.Contains(a.DeleteRules, r.ID) })
	for _, r := range a.Rules {
		r.ID, r.Enabled = "", true
		cfg.Rules = append(cfg.Rules, r)
	}
	w, err := wire.Typed[messages.WhatIfReply](ctx, t.Light, messages.VerbWhatIf, messages.WhatIfRequest{Config: json.RawMessage(mustJSON(cfg)), Since: a.Since})
	if err != nil {
		return nil, err
	}
	if len(w.Differences) > 5 {
		w.Differences = w.Differences[:5]
	}
	w.OK = false
	return json.Marshal(w)
}
