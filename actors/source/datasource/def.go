package datasource

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lumen-home/lumen/messages"
)

// Source types, the "type" of a Def.
const (
	TypePoll     = "poll"     // run fetch.tool every interval_ms
	TypeInternal = "internal" // compute tracks from the light's history every interval_ms
	TypeNATS     = "nats"     // a message on subject
	TypeWebhook  = "webhook"  // an HTTP request on the daemon's HTTP port
	TypeMQTT     = "mqtt"     // an MQTT message on topic, through the embedded server
	TypeGPIO     = "gpio"     // an edge on an input pin, read by the hardware actor
	// TypeTransition is a custom transition (seed 000 §3): every
	// interval_ms it runs fetch.tool, a predicate, and fires when the
	// result turns from false to true. It stores nothing.
	TypeTransition = "transition"
)

var types = []string{TypePoll, TypeInternal, TypeNATS, TypeWebhook, TypeMQTT, TypeGPIO, TypeTransition}

// typeAliases are the seed's spellings.
var typeAliases = map[string]string{"http_listener": TypeWebhook, "mqtt_subscribe": TypeMQTT}

// CanonicalType is a source type as Lumen spells it: the seed's aliases
// (http_listener, mqtt_subscribe) become webhook and mqtt.
func CanonicalType(t string) string {
	if c, ok := typeAliases[t]; ok {
		return c
	}
	return t
}

// What an internal source tracks, the "tracks" of a Def.
const (
	TrackStateDuration    = "state_duration"     // whole seconds in the current state
	TrackTimeInStateMs    = "time_in_state_ms"   // milliseconds in the current state
	TrackTransitionsToday = "transitions_today"  // transitions since local midnight
	TrackLast5Transitions = "last_5_transitions" // the last 5 transition names, oldest first
)

var tracks = []string{TrackLast5Transitions, TrackStateDuration, TrackTimeInStateMs, TrackTransitionsToday}

// Types lists the source types; Tracks what an internal source may track.
func Types() []string  { return slices.Clone(types) }
func Tracks() []string { return slices.Clone(tracks) }

// Limits on definitions.
const (
	MinPollInterval     = 10 * time.Second
	MinInternalInterval = time.Second
	// MinTransitionInterval: a predicate's poll journals nothing unless
	// it fires, but each one is a fresh sandbox instance.
	MinTransitionInterval   = time.Second
	DefaultInternalInterval = time.Minute
	MaxInterval             = 7 * 24 * time.Hour
	MaxNameLen              = 64 // source, variable, tool and transition names
	MaxStore                = 32 // variables one source stores
	MaxGPIOPin              = 27 // the highest BCM line on the 40-pin header
	// DefaultDebounceMs suits a mechanical contact; a PIR sensor does
	// not bounce and may use 0.
	DefaultDebounceMs = 20
	MaxDebounceMs     = 10000
)

// Fetch is the tool a poll source runs and its arguments (a JSON object).
type Fetch struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args,omitempty"`
}

// Def is a data source definition; see the package documentation for the
// fields. Decode reads and validates one; UnmarshalJSON only reads it
// (strictly, with the seed's aliases and the defaults), so that replaying
// a journaled definition does not depend on today's tools or limits.
type Def struct {
	Name       string            `json:"name"`
	Type       string            `json:"type"`
	IntervalMs int               `json:"interval_ms,omitempty"`
	Fetch      Fetch             `json:"fetch,omitzero"`
	Store      map[string]string `json:"store,omitempty"`
	Fires      string            `json:"fires,omitempty"`
	Subject    string            `json:"subject,omitempty"`
	Topic      string            `json:"topic,omitempty"`
	// Broker is the broker an mqtt source listens on: "" the embedded
	// server's MQTT listener, BrokerHA Home Assistant's (lumen up
	// --ha-mqtt), whose messages the Home Assistant bridge passes on.
	Broker string `json:"broker,omitempty"`
	Pin    *int   `json:"pin,omitempty"`
	Pull   string `json:"pull,omitempty"`
	Edge   string `json:"edge,omitempty"`
	// DebounceMs is a gpio source's debounce window; nil only before
	// UnmarshalJSON fills the default, so 0 (no debounce) survives.
	DebounceMs *int   `json:"debounce_ms,omitempty"`
	Tracks     string `json:"tracks,omitempty"`
	// TokenSHA256 is a webhook's token as the hex SHA-256 of the
	// "token" it was defined with: the definition is journaled, shown
	// by get and list_sources and read by the agent's model, none of
	// which should learn the token itself.
	TokenSHA256 string `json:"token_sha256,omitempty"`
}

type fetchWire struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
}

type defWire struct {
	Name       string                     `json:"name"`
	Type       string                     `json:"type"`
	Internal   *bool                      `json:"internal"`
	IntervalMs *json.Number               `json:"interval_ms"`
	Fetch      *fetchWire                 `json:"fetch"`
	Store      map[string]json.RawMessage `json:"store"`
	Fires      string                     `json:"fires"`
	Subject    string                     `json:"subject"`
	Topic      string                     `json:"topic"`
	Broker     string                     `json:"broker"`
	Pin        *json.Number               `json:"pin"`
	Pull       string                     `json:"pull"`
	Edge       string                     `json:"edge"`
	DebounceMs *json.Number               `json:"debounce_ms"`
	Tracks     string                     `json:"tracks"`
	Port       json.RawMessage            `json:"port"`
	Token      *string                    `json:"token"`
	TokenHash  string                     `json:"token_sha256"`
}

// UnmarshalJSON reads a definition strictly: unknown fields are an error,
// the seed's aliases are accepted, numbers must be integers, and the
// defaults are filled in (type poll; internal: interval 60 s, tracks from
// the name, store {tracks: "result"}; gpio: pull none, edge rising).
func (d *Def) UnmarshalJSON(b []byte) error {
	if len(bytes.TrimSpace(b)) == 0 {
		return errorf(CodeInvalid, "the definition is empty; send a JSON object like {\"name\":\"weather\",\"interval_ms\":3600000,\"fetch\":{\"tool\":\"get_weather\"},\"store\":{\"temperature\":\"result.temp\"},\"fires\":\"weather_updated\"}")
	}
	var w defWire
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(&w); err != nil {
		return errorf(CodeInvalid, "%s", messages.Explain(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return errorf(CodeInvalid, "unexpected data after the JSON value; send exactly one JSON object")
	}
	label := "source"
	if w.Name != "" {
		label = fmt.Sprintf("source %q", w.Name)
	}
	out := Def{Name: w.Name, Type: w.Type, Fires: w.Fires, Subject: w.Subject,
		Topic: w.Topic, Broker: w.Broker, Pull: w.Pull, Edge: w.Edge, Tracks: w.Tracks, TokenSHA256: w.TokenHash}
	if out.Broker == BrokerLumen {
		out.Broker = "" // the default, said explicitly
	}
	if w.Token != nil {
		if w.TokenHash != "" {
			return errorf(CodeInvalid, "%s: give token or token_sha256, not both", label)
		}
		if err := checkToken(label, *w.Token); err != nil {
			return err
		}
		out.TokenSHA256 = HashToken(*w.Token)
	}
	if w.Store != nil {
		out.Store = make(map[string]string, len(w.Store))
		for _, v := range slices.Sorted(maps.Keys(w.Store)) {
			var p string
			if raw := w.Store[v]; len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &p) != nil {
				return errorf(CodeInvalid, "%s: store %q: the path must be a string like \"result.temp\", not %s", label, v, raw)
			}
			out.Store[v] = p
		}
	}
	out.Type = CanonicalType(out.Type)
	if w.Internal != nil && *w.Internal {
		if out.Type != "" && out.Type != TypeInternal {
			return errorf(CodeInvalid, "%s: \"internal\": true contradicts type %q; give only one", label, out.Type)
		}
		out.Type = TypeInternal
	}
	if out.Type == "" {
		out.Type = TypePoll
	}
	if w.Port != nil {
		return errorf(CodeInvalid, "%s: port cannot be set per source; webhooks arrive on the daemon's HTTP port (lumen up --http 127.0.0.1:8080), so remove port", label)
	}
	if w.IntervalMs != nil {
		n, err := strconv.ParseInt(string(*w.IntervalMs), 10, 64)
		if err != nil || n < 0 || n > int64(MaxInterval/time.Millisecond) {
			return errorf(CodeInvalid, "%s: interval_ms must be a whole number of milliseconds from 0 to %d (7 days), got %s", label, MaxInterval/time.Millisecond, *w.IntervalMs)
		}
		out.IntervalMs = int(n)
	}
	if w.Pin != nil {
		n, err := strconv.Atoi(string(*w.Pin))
		if err != nil || n < 0 || n > MaxGPIOPin {
			return errorf(CodeInvalid, "%s: pin %s is not a GPIO input; use a BCM number from 0 to %d, e.g. 17", label, *w.Pin, MaxGPIOPin)
		}
		out.Pin = &n
	}
	if w.DebounceMs != nil {
		n, err := strconv.Atoi(string(*w.DebounceMs))
		if err != nil || n < 0 || n > MaxDebounceMs {
			return errorf(CodeInvalid, "%s: debounce_ms must be a whole number of milliseconds from 0 to %d, got %s", label, MaxDebounceMs, *w.DebounceMs)
		}
		out.DebounceMs = &n
	}
	if w.Fetch != nil {
		out.Fetch.Tool = w.Fetch.Tool
		if args := bytes.TrimSpace(w.Fetch.Args); len(args) > 0 && string(args) != "null" {
			var buf bytes.Buffer
			if err := json.Compact(&buf, args); err != nil {
				return errorf(CodeInvalid, "%s: fetch.args is not valid JSON: %v", label, err)
			}
			// As encoding/json writes it (compact, with <, > and &
			// escaped), so that a definition encodes to itself.
			out.Fetch.Args, _ = json.Marshal(json.RawMessage(buf.Bytes()))
		} else {
			out.Fetch.Args = json.RawMessage("{}")
		}
	}
	switch out.Type {
	case TypeInternal:
		// 0, given or not, is the default (as Interval says): spelled
		// out, so that the definition encodes and decodes the same.
		if out.IntervalMs == 0 {
			out.IntervalMs = int(DefaultInternalInterval / time.Millisecond)
		}
		if out.Tracks == "" && slices.Contains(tracks, out.Name) {
			out.Tracks = out.Name
		}
		if len(out.Store) == 0 && w.Store == nil && out.Tracks != "" {
			out.Store = map[string]string{out.Tracks: "result"}
		}
	case TypeGPIO:
		if out.Pull == "" || out.Pull == "off" {
			out.Pull = "none"
		}
		if out.Edge == "" {
			out.Edge = "rising"
		}
		if out.DebounceMs == nil {
			n := DefaultDebounceMs
			out.DebounceMs = &n
		}
	}
	*d = out
	return nil
}

// Option changes how Decode and Validate check a definition.
type Option func(*options)

type options struct {
	minPoll, minInternal, minTransition time.Duration
	tools                               map[string]bool // nil: tool names are not checked
	storeRequired                       bool
}

// WithMinInterval lowers (or raises) the minimum interval of poll and
// internal sources, for tests that cannot wait 10 s. A custom
// transition's minimum is never raised above MinTransitionInterval.
func WithMinInterval(d time.Duration) Option {
	return func(o *options) { o.minPoll, o.minInternal, o.minTransition = d, d, min(d, MinTransitionInterval) }
}

// WithTools gives the names of the tools that exist; fetch.tool must be
// one of them. Without it, only the tool name's spelling is checked.
func WithTools(names ...string) Option {
	return func(o *options) {
		o.tools = make(map[string]bool, len(names))
		for _, n := range names {
			o.tools[n] = true
		}
	}
}

// WithStoreRequired refuses a poll source that only fires, as lumen did
// before such sources were accepted: a light replays the inputs it
// journaled then with the checks of then.
func WithStoreRequired() Option {
	return func(o *options) { o.storeRequired = true }
}

// Decode reads a definition strictly and validates it.
func Decode(b []byte, opts ...Option) (Def, error) {
	var d Def
	if err := d.UnmarshalJSON(b); err != nil {
		return Def{}, err
	}
	if err := d.Validate(opts...); err != nil {
		return Def{}, err
	}
	return d, nil
}

// Kind returns the source's type, poll when Type is empty.
func (d Def) Kind() string {
	if d.Type == "" {
		return TypePoll
	}
	return d.Type
}

// Polled reports whether the source runs on an interval (poll, internal
// and transition); the others are pushed.
func (d Def) Polled() bool {
	k := d.Kind()
	return k == TypePoll || k == TypeInternal || k == TypeTransition
}

// Interval returns how often a polled source runs; 0 for a pushed one.
func (d Def) Interval() time.Duration {
	if !d.Polled() {
		return 0
	}
	if d.IntervalMs == 0 && d.Kind() == TypeInternal {
		return DefaultInternalInterval
	}
	return time.Duration(d.IntervalMs) * time.Millisecond
}

// storeOf is the store, with an internal source's default.
func (d Def) storeOf() map[string]string {
	if len(d.Store) == 0 && d.Kind() == TypeInternal && d.Tracks != "" {
		return map[string]string{d.Tracks: "result"}
	}
	return d.Store
}

// Validate checks a definition: every error is a sentence that says what
// to fix.
func (d Def) Validate(opts ...Option) error {
	o := options{minPoll: MinPollInterval, minInternal: MinInternalInterval, minTransition: MinTransitionInterval}
	for _, opt := range opts {
		opt(&o)
	}
	if d.Name == "" {
		return errorf(CodeInvalid, "name is empty; name the source with lowercase letters a-z, digits 0-9, '_' or '-', e.g. \"weather\"")
	}
	if !validName(d.Name) {
		return errorf(CodeInvalid, "name %q is not valid; use 1 to %d lowercase letters a-z, digits 0-9, '_' or '-', e.g. \"weather\"", d.Name, MaxNameLen)
	}
	label := fmt.Sprintf("source %q", d.Name)
	kind := d.Kind()
	if !slices.Contains(types, kind) {
		return errorf(CodeInvalid, "%s: unknown type %q; use one of %s", label, d.Type, strings.Join(types, ", "))
	}
	// Fields that belong to other types.
	for _, f := range []struct {
		name string
		set  bool
		kind []string
	}{
		{"interval_ms", d.IntervalMs != 0, []string{TypePoll, TypeInternal, TypeTransition}},
		{"fetch", d.Fetch.Tool != "" || d.Fetch.Args != nil, []string{TypePoll, TypeTransition}},
		{"subject", d.Subject != "", []string{TypeNATS}},
		{"topic", d.Topic != "", []string{TypeMQTT}},
		{"broker", d.Broker != "", []string{TypeMQTT}},
		{"pin", d.Pin != nil, []string{TypeGPIO}},
		{"pull", d.Pull != "", []string{TypeGPIO}},
		{"edge", d.Edge != "", []string{TypeGPIO}},
		{"debounce_ms", d.DebounceMs != nil, []string{TypeGPIO}},
		{"tracks", d.Tracks != "", []string{TypeInternal}},
		{"token", d.TokenSHA256 != "", []string{TypeWebhook}},
	} {
		if f.set && !slices.Contains(f.kind, kind) {
			return errorf(CodeInvalid, "%s: %s is only for %s sources, and this one is %s; remove it or change type", label, f.name, andList(f.kind), kind)
		}
	}
	if d.Polled() {
		minIv := o.minPoll
		switch kind {
		case TypeInternal:
			minIv = o.minInternal
		case TypeTransition:
			minIv = o.minTransition
		}
		iv := d.Interval()
		switch {
		case iv == 0:
			return errorf(CodeInvalid, "%s: interval_ms is missing; say how often to run it, in milliseconds (at least %d)", label, minIv.Milliseconds())
		case iv < minIv:
			return errorf(CodeInvalid, "%s: interval_ms %d is below the minimum of %d (%v); run it less often", label, d.IntervalMs, minIv.Milliseconds(), minIv)
		case iv > MaxInterval:
			return errorf(CodeInvalid, "%s: interval_ms %d is above the maximum of %d (7 days)", label, d.IntervalMs, MaxInterval.Milliseconds())
		}
	}
	switch kind {
	case TypePoll:
		if err := d.checkFetch(label, o.tools); err != nil {
			return err
		}
		if len(d.Store) == 0 && o.storeRequired {
			return errorf(CodeInvalid, "%s: store is empty; map at least one variable to a path in the tool's result, e.g. {\"temperature\":\"result.main.temp\"}", label)
		}
		if len(d.Store) == 0 && d.Fires == "" {
			return errorf(CodeInvalid, "%s: a poll source needs store (variables to set from the tool's result, e.g. {\"temperature\":\"result.main.temp\"}), fires (the transition to fire on each run), or both", label)
		}
	case TypeTransition:
		if err := d.checkFetch(label, o.tools); err != nil {
			return err
		}
		if d.Fires == "" {
			return errorf(CodeInvalid, "%s: fires is missing; a custom transition fires it when its predicate turns true", label)
		}
		if len(d.Store) > 0 {
			return errorf(CodeInvalid, "%s: a custom transition stores nothing, it only fires; remove store, or make it a poll source", label)
		}
	case TypeInternal:
		if !slices.Contains(tracks, d.Tracks) {
			if d.Tracks == "" {
				return errorf(CodeInvalid, "%s: tracks is missing; use one of %s", label, strings.Join(tracks, ", "))
			}
			return errorf(CodeInvalid, "%s: unknown tracks %q; use one of %s", label, d.Tracks, strings.Join(tracks, ", "))
		}
	case TypeNATS:
		if err := checkSubject(label, d.Subject); err != nil {
			return err
		}
	case TypeMQTT:
		if _, err := mqttSubject(label, d.Topic); err != nil {
			return err
		}
		if d.Broker != "" && d.Broker != BrokerHA {
			return errorf(CodeInvalid, "%s: unknown broker %q; use %s (Home Assistant's, lumen up --ha-mqtt) or leave it out for lumen's own MQTT listener (lumen up --mqtt)", label, d.Broker, BrokerHA)
		}
	case TypeWebhook:
		if d.TokenSHA256 != "" && !validHash(d.TokenSHA256) {
			return errorf(CodeInvalid, "%s: token_sha256 must be 64 lowercase hex digits, the SHA-256 of the token; or give the token itself as token", label)
		}
	case TypeGPIO:
		switch {
		case d.Pin == nil:
			return errorf(CodeInvalid, "%s: pin is missing; give the BCM number of the input pin, e.g. 17", label)
		case *d.Pin < 0 || *d.Pin > MaxGPIOPin:
			return errorf(CodeInvalid, "%s: pin %d is not a GPIO input; use a BCM number from 0 to %d, e.g. 17", label, *d.Pin, MaxGPIOPin)
		case !slices.Contains([]string{"", "none", "up", "down"}, d.Pull):
			return errorf(CodeInvalid, "%s: pull %q is not a bias; use none, up or down", label, d.Pull)
		case !slices.Contains([]string{"", "rising", "falling", "both"}, d.Edge):
			return errorf(CodeInvalid, "%s: edge %q is not an edge; use rising, falling or both", label, d.Edge)
		case d.DebounceMs != nil && (*d.DebounceMs < 0 || *d.DebounceMs > MaxDebounceMs):
			return errorf(CodeInvalid, "%s: debounce_ms %d is outside 0–%d", label, *d.DebounceMs, MaxDebounceMs)
		}
	}
	if len(d.Store) > MaxStore {
		return errorf(CodeInvalid, "%s: store has %d variables, more than %d; split the source", label, len(d.Store), MaxStore)
	}
	for _, v := range slices.Sorted(maps.Keys(d.Store)) {
		switch {
		case strings.HasSuffix(v, PrevSuffix):
			return errorf(CodeInvalid, "%s: store variable %q ends in %s, which is kept automatically; store %q instead", label, v, PrevSuffix, strings.TrimSuffix(v, PrevSuffix))
		case !validVar(v):
			return errorf(CodeInvalid, "%s: store variable %q is not a valid name; start with a letter or '_', then letters, digits or '_' (at most %d)", label, v, MaxNameLen)
		}
		if _, err := ParsePath(d.Store[v]); err != nil {
			return errorf(CodeInvalid, "%s: store %q: %v", label, v, err)
		}
	}
	if d.Fires != "" && !validTransition(d.Fires) {
		return errorf(CodeInvalid, "%s: fires %q is not a valid transition name; start with a letter, then letters, digits, '_', '-', '.', ':' or '/' (at most %d), e.g. %s_updated", label, d.Fires, MaxNameLen, d.Name)
	}
	if !d.Polled() && len(d.Store) == 0 && d.Fires == "" {
		return errorf(CodeInvalid, "%s: a %s source needs fires (the transition to fire on each message), store (variables to set from it), or both", label, kind)
	}
	return nil
}

func (d Def) checkFetch(label string, tools map[string]bool) error {
	f := d.Fetch
	switch {
	case f.Tool == "" && f.Args == nil:
		return errorf(CodeInvalid, "%s: fetch is missing; give {\"tool\": NAME, \"args\": {…}}, the tool to run and its arguments", label)
	case f.Tool == "":
		return errorf(CodeInvalid, "%s: fetch.tool is empty; name the tool to run, e.g. fetch_json", label)
	case !validTool(f.Tool):
		return errorf(CodeInvalid, "%s: fetch.tool %q is not a valid tool name; tools are named with a letter, then letters, digits or '_' (at most %d)", label, f.Tool, MaxNameLen)
	case tools != nil && !tools[f.Tool]:
		known := slices.Sorted(maps.Keys(tools))
		if len(known) == 0 {
			return errorf(CodeUnknownTool, "%s: unknown tool %q, and no tool exists yet; define it with define_tool first", label, f.Tool)
		}
		more := ""
		if len(known) > 20 {
			known, more = known[:20], ", …"
		}
		return errorf(CodeUnknownTool, "%s: unknown tool %q; define it with define_tool first, or use one of %s%s", label, f.Tool, strings.Join(known, ", "), more)
	}
	if len(f.Args) > 0 {
		if b := bytes.TrimSpace(f.Args); len(b) == 0 || b[0] != '{' || !json.Valid(b) {
			return errorf(CodeInvalid, "%s: fetch.args must be a JSON object, e.g. {\"location\":\"Paris\"}", label)
		}
	}
	return nil
}

// andList joins "a", "b" and "c" as "a, b and c".
func andList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// validName: a source name, [a-z0-9_-]{1,64}, usable as a subject token.
func validName(s string) bool {
	if len(s) == 0 || len(s) > MaxNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

// validVar: a variable name, a JavaScript identifier without '$':
// [A-Za-z_][A-Za-z0-9_]{0,63}.
func validVar(s string) bool {
	if len(s) == 0 || len(s) > MaxNameLen || !(isLetter(s[0]) || s[0] == '_') {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !(isLetter(s[i]) || isDigit(s[i]) || s[i] == '_') {
			return false
		}
	}
	return true
}

// validTool: [A-Za-z][A-Za-z0-9_]{0,63}.
func validTool(s string) bool {
	return len(s) > 0 && isLetter(s[0]) && validVar(s)
}

// validTransition: [A-Za-z][A-Za-z0-9_.:/-]{0,63}: no spaces, no
// wildcard, so that it reads the same in a rule's "on" and on a subject.
func validTransition(s string) bool {
	if len(s) == 0 || len(s) > MaxNameLen || !isLetter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(isLetter(c) || isDigit(c) || strings.IndexByte("_.:/-", c) >= 0) {
			return false
		}
	}
	return true
}

// reserved reports whether a subject's first token belongs to the daemon
// or the server: lumen.…, $SYS.…, $JS.…, _INBOX.….
func reserved(first string) bool {
	return first == "lumen" || strings.HasPrefix(first, "$") || first == "_INBOX"
}

func checkSubject(label, s string) error {
	if s == "" {
		return errorf(CodeInvalid, "%s: subject is missing; give the NATS subject to listen on, e.g. home.doorbell", label)
	}
	toks := strings.Split(s, ".")
	for i, t := range toks {
		if t == "" || strings.ContainsAny(t, " \t\r\n") || (t != "*" && t != ">" && strings.ContainsAny(t, "*>")) || (t == ">" && i != len(toks)-1) {
			return errorf(CodeInvalid, "%s: subject %q is not a valid NATS subject; use dot-separated tokens without spaces, e.g. home.doorbell (a token * matches one token, a final > the rest)", label, s)
		}
	}
	if reserved(toks[0]) {
		return errorf(CodeInvalid, "%s: subject %q is reserved for Lumen and the NATS server; use your own prefix, e.g. home.doorbell", label, s)
	}
	// A leading wildcard would also match lumen.>: the source would hear
	// the light's own commands and events, and feed on itself.
	if toks[0] == "*" || toks[0] == ">" {
		return errorf(CodeInvalid, "%s: subject %q starts with a wildcard, which also matches Lumen's own subjects (lumen.>); start with your own prefix, e.g. home.>", label, s)
	}
	return nil
}

// ListenSubject returns the NATS subject a nats or mqtt source listens on:
// the subject itself, or the topic as the embedded server's MQTT listener
// publishes it (home/doorbell → home.doorbell, + → *, # → >). It is empty
// for the other types.
func (d Def) ListenSubject() string {
	switch d.Kind() {
	case TypeNATS:
		return d.Subject
	case TypeMQTT:
		s, _ := mqttSubject("", d.Topic)
		if d.Broker == BrokerHA {
			return HASubject(s)
		}
		return s
	}
	return ""
}

// Brokers of an mqtt source.
const (
	BrokerLumen = "lumen" // the embedded server's MQTT listener (the default)
	BrokerHA    = "ha"    // Home Assistant's broker (lumen up --ha-mqtt)
)

// HASubject is where the Home Assistant bridge passes on a message of
// its broker, subj being the topic as a subject (home/door is
// home.door): ha.home.door.
func HASubject(subj string) string { return "ha." + subj }

// TopicSubject is an MQTT topic (with + and # wildcards) as a NATS
// subject (* and >), or an error naming what cannot be one.
func TopicSubject(topic string) (string, error) { return mqttSubject("topic", topic) }

func mqttSubject(label, topic string) (string, error) {
	if topic == "" {
		return "", errorf(CodeInvalid, "%s: topic is missing; give the MQTT topic to listen on, e.g. home/doorbell", label)
	}
	levels := strings.Split(topic, "/")
	toks := make([]string, len(levels))
	for i, l := range levels {
		switch {
		case l == "+":
			toks[i] = "*"
		case l == "#" && i == len(levels)-1:
			toks[i] = ">"
		case l == "" || strings.ContainsAny(l, " \t\r\n.*>+#"):
			return "", errorf(CodeInvalid, "%s: topic %q is not supported; use '/'-separated levels of letters, digits, '_' or '-', e.g. home/doorbell (a level + matches one level, a final # the rest)", label, topic)
		default:
			toks[i] = l
		}
	}
	if reserved(toks[0]) || toks[0] == "*" || toks[0] == ">" {
		return "", errorf(CodeInvalid, "%s: topic %q is reserved for Lumen and the NATS server, or starts with a wildcard that matches them; use your own prefix, e.g. home/doorbell", label, topic)
	}
	return strings.Join(toks, "."), nil
}
