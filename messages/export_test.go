package messages_test

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/lumen-home/lumen/messages"
)

// roundTrip writes c as YAML and reads it back the way lumen apply -f
// does: ToJSON, then Decode.
func roundTrip(t *testing.T, c messages.ApplyRequest) ([]byte, messages.ApplyRequest) {
	t.Helper()
	y, err := messages.ToYAML(c)
	if err != nil {
		t.Fatalf("ToYAML: %v", err)
	}
	j, err := messages.ToJSON(y, ".yaml")
	if err != nil {
		t.Fatalf("ToJSON: %v\n%s", err, y)
	}
	var got messages.ApplyRequest
	if err := messages.Decode(j, &got); err != nil {
		t.Fatalf("Decode: %v\n%s", err, j)
	}
	return y, got
}

// sameConfig fails t unless got is want as a light reads it: the same
// JSON values (the order of keys in vars, params and sources is not kept
// by ToJSON, which reads objects into maps) and vars nil or not alike
// (apply keeps the light's vars when they are nil, clears them when
// empty).
func sameConfig(t *testing.T, y []byte, got, want messages.ApplyRequest) {
	t.Helper()
	canon := func(c messages.ApplyRequest) any {
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	if g, w := canon(got), canon(want); !reflect.DeepEqual(g, w) {
		t.Errorf("read back as\n%v\nnot\n%v\nfrom\n%s", g, w, y)
	}
	if (got.Vars == nil) != (want.Vars == nil) {
		t.Errorf("vars read back as %v, want %v, from\n%s", got.Vars, want.Vars, y)
	}
}

func rawJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A string is written plain unless YAML would read it back as something
// else; wherever it is (a name, a rule, a var's name or value, a tool, a
// source) it reads back as itself.
func TestToYAMLStrings(t *testing.T) {
	tests := []struct {
		name, given, want string // want: the state's name as written
	}{
		{"YAML 1.1 booleans are strings in YAML 1.2", "on", "on"},
		{"off", "off", "off"},
		{"yes", "yes", "yes"},
		{"no", "no", "no"},
		{"a boolean", "true", `"true"`},
		{"a capitalized boolean", "False", `"False"`},
		{"an integer", "1", `"1"`},
		{"a float", "1.5", `"1.5"`},
		{"a hex integer", "0x1F", `"0x1F"`},
		{"an integer with underscores", "1_000", `"1_000"`},
		{"an infinity", ".inf", `".inf"`},
		{"a timestamp", "2024-01-01", `"2024-01-01"`},
		{"null", "null", `"null"`},
		{"the other null", "~", `"~"`},
		{"empty", "", `""`},
		{"a merge key", "<<", `"<<"`},
		{"an alias", "*", `'*'`},
		{"an alias name", "*x", `'*x'`},
		{"an anchor", "&x", `'&x'`},
		{"a tag", "!x", `'!x'`},
		{"a mapping", "a: b", `'a: b'`},
		{"a comment", "#x", `'#x'`},
		{"a comment after text", "x #y", `'x #y'`},
		{"a list item", "- x", `'- x'`},
		{"a flow list", "[x]", `'[x]'`},
		{"a document start", "--- x", `'--- x'`},
		{"a hierarchical name", "red/dark", "red/dark"},
		{"unicode", "café ☕ 🌈", "café ☕ 🌈"},
		{"an expression", "getData('n') > 0", "getData('n') > 0"},
		{"an expression with ': '", "getData('n') > 0 ? 255 : 0", `"getData('n') > 0 ? 255 : 0"`},
		{"double quotes", `say "hi"`, `say "hi"`},
		{"both quotes", `a: "b" 'c'`, `'a: "b" ''c'''`},
		{"a backslash and a quote", `a: '\d'`, `'a: ''\d'''`},
		{"leading spaces", "  lead", "'  lead'"},
		{"a trailing space", "trail ", "'trail '"},
		{"a tab", "tab\there", `"tab\there"`},
		{"a control character", "x\x00y", `"x\0y"`},
		{"invalid UTF-8, replaced as JSON replaces it", "bad \xff", "bad \uFFFD"},
		{"the private-use mark of the disguise", "\uE000 mark 🌈", "\uE000 mark 🌈"},
		{"a long expression", "getData('weather').temp > 25 && getData('weather').humidity < 80 && getData('clicks') % 2 === 0",
			"getData('weather').temp > 25 && getData('weather').humidity < 80 && getData('clicks') % 2 === 0"},
		{"two lines", "a\nb", "|-\n      a\n      b"},
		{"a final newline", "line\n", "|\n      line"},
		{"final newlines", "x\n\n", "|+\n      x\n"},
		{"a leading indent", "  indented\nx", "|2-\n        indented\n      x"},
		{"tabs in code", "if (x) {\n\treturn 1;\n}", "|-\n      if (x) {\n      \treturn 1;\n      }"},
		{"a leading tab, which yaml.v3 cannot read in a block", "\tx\ny\t", `"\tx\ny\t"`},
		{"a tab leading a later line", "x\n\ty", "|-\n      x\n      \ty"},
		{"emoji in code", "return '🌈';\n// ☕", "|-\n      return '🌈';\n      // ☕"},
		{"a space before a line break", "a \nb", `"a \nb"`},
		{"CRLF", "a\r\nb", `"a\r\nb"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.given
			src := fmt.Sprintf(`{"name":%s,"type":%s}`, rawJSON(t, s), rawJSON(t, s))
			if s != "name" && s != "type" {
				src = fmt.Sprintf(`{"name":%s,%s:%s}`, rawJSON(t, s), rawJSON(t, s), rawJSON(t, s))
			}
			c := messages.ApplyRequest{
				States:    []messages.State{{Name: s, R: messages.Num(255), G: messages.Num(0), B: messages.Num(0), Description: s}},
				Rules:     []messages.Rule{{From: s, On: s, To: s, Condition: s, Action: s, Enabled: true}},
				Vars:      map[string]json.RawMessage{s: rawJSON(t, s)},
				Initial:   s,
				Schedules: []messages.Schedule{{Name: s, Cron: s, TZ: s, Fires: s}},
				Tools:     []messages.Tool{{Name: s, Description: s, Code: s, Hosts: []string{s}}},
				Sources:   []json.RawMessage{json.RawMessage(src)},
			}
			y, got := roundTrip(t, c)
			sameConfig(t, y, got, c)
			_, after, _ := strings.Cut(string(y), "states:\n  - name: ")
			name, _, _ := strings.Cut(after, "\n    r: 255")
			if name != tt.want {
				t.Errorf("name written as\n%s\nwant\n%s\nin\n%s", name, tt.want, y)
			}
		})
	}
}

// A channel is a number, written as an integer when it is one and as the
// shortest float otherwise, or an expression.
func TestToYAMLChannels(t *testing.T) {
	tests := []struct {
		given messages.Channel
		want  string
	}{
		{messages.Num(255), "255"},
		{messages.Num(0), "0"},
		{messages.Num(math.Copysign(0, -1)), "0"},
		{messages.Num(-3), "-3"},
		{messages.Num(0.5), "0.5"},
		{messages.Num(0.30000000000000004), "0.30000000000000004"},
		{messages.Num(1e-7), "1e-7"},
		{messages.Num(1e20), "100000000000000000000"},
		{messages.Num(1e21), "1e21"},
		{messages.Num(-1.5e300), "-1.5e300"},
		{messages.Expr("sin(frame*0.1)*127+128"), "sin(frame*0.1)*127+128"},
		{messages.Expr("-x"), "-x"},
		{messages.Expr("getData('n') ? 255 : 0"), `"getData('n') ? 255 : 0"`},
		{messages.Expr("0x1F"), `"0x1F"`}, // JavaScript's 31, YAML's too: quoted, it stays an expression
	}
	for _, tt := range tests {
		c := messages.ApplyRequest{States: []messages.State{{Name: "x", R: tt.given, G: messages.Num(0), B: messages.Num(0)}}}
		y, got := roundTrip(t, c)
		sameConfig(t, y, got, c)
		if want := "    r: " + tt.want + "\n"; !strings.Contains(string(y), want) {
			t.Errorf("%+v written as\n%s\nwant %q", tt.given, y, want)
		}
	}
}

// JSON values become YAML with their keys in the order of the JSON text.
func TestToYAMLJSONValues(t *testing.T) {
	c := messages.ApplyRequest{
		States: []messages.State{{Name: "x"}},
		Vars: map[string]json.RawMessage{
			"null":   json.RawMessage(`null`),
			"t":      json.RawMessage(`true`),
			"f":      json.RawMessage(`false`),
			"zero":   json.RawMessage(`0`),
			"neg":    json.RawMessage(`-1`),
			"frac":   json.RawMessage(`1.5`),
			"one":    json.RawMessage(`1.0`),
			"exp":    json.RawMessage(`1E+3`),
			"tiny":   json.RawMessage(`-2.5e-10`),
			"uint":   json.RawMessage(`12345678901234567890`),
			"huge":   json.RawMessage(`123456789012345678901234567890`),
			"on":     json.RawMessage(`"on"`),
			"str":    json.RawMessage(`"1"`),
			"empty":  json.RawMessage(`""`),
			"arr":    json.RawMessage(`[]`),
			"obj":    json.RawMessage(`{}`),
			"nested": json.RawMessage(` { "z" : 1 , "a" : { "y" : [ 1 , { "b" : 2 , "a" : [ ] } ] , "x" : null } } `),
			"dup":    json.RawMessage(`{"a":1,"b":2,"a":3}`),
		},
		Tools: []messages.Tool{{Name: "t", Code: "return 1",
			Params:  json.RawMessage(`{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"number","minimum":0}},"required":["zeta"]}`),
			Returns: json.RawMessage(`{"type":"number"}`)}},
		Sources: []json.RawMessage{
			json.RawMessage(`{"type":"poll","interval_ms":60000,"name":"w","fetch":{"tool":"t","args":{"zeta":"a"}},"store":{"w":"result"}}`),
			json.RawMessage(`{"type":"internal","tracks":"state_duration","store":{"d":"result"}}`),
		},
	}
	y, got := roundTrip(t, c)
	sameConfig(t, y, got, c)
	want := `states:
  - name: x
    r: 0
    g: 0
    b: 0
vars:
  arr: []
  dup:
    a: 3
    b: 2
  empty: ""
  exp: 1000
  f: false
  frac: 1.5
  huge: 1.2345678901234568e29
  neg: -1
  nested:
    z: 1
    a:
      y:
        - 1
        - b: 2
          a: []
      x: null
  "null": null
  obj: {}
  on: on
  one: 1
  str: "1"
  t: true
  tiny: -2.5e-10
  uint: 12345678901234567890
  zero: 0
tools:
  - name: t
    params:
      type: object
      properties:
        zeta:
          type: string
        alpha:
          type: number
          minimum: 0
      required:
        - zeta
    code: return 1
    returns:
      type: number
sources:
  - name: w
    type: poll
    interval_ms: 60000
    fetch:
      tool: t
      args:
        zeta: a
    store:
      w: result
  - type: internal
    tracks: state_duration
    store:
      d: result
`
	if string(y) != want {
		t.Errorf("got\n%s\nwant\n%s", y, want)
	}
}

// The built-in off state is written only when it is not the plain one,
// or when it is all there is.
func TestToYAMLOff(t *testing.T) {
	speed := 20
	plain := messages.State{Name: "off", R: messages.Num(0), G: messages.Num(0), B: messages.Num(0)}
	red := messages.State{Name: "red", R: messages.Num(255), G: messages.Num(0), B: messages.Num(0)}
	rule := messages.Rule{From: "off", On: "button_click", To: "red", Enabled: true}
	dim := plain
	dim.B = messages.Num(10)
	pulse := plain
	pulse.R = messages.Expr("frame % 2")
	slow := plain
	slow.Speed = &speed
	described := plain
	described.Description = "dark"
	tests := []struct {
		name    string
		given   []messages.State
		rules   []messages.Rule
		wantOff bool
	}{
		{"plain", []messages.State{plain, red}, []messages.Rule{rule}, false},
		{"plain, not first", []messages.State{red, plain}, nil, false},
		{"plain and all there is", []messages.State{plain}, nil, true},
		{"plain with rules", []messages.State{plain}, []messages.Rule{{From: "off", On: "x", To: "off", Enabled: true}}, false},
		{"recolored", []messages.State{dim, red}, []messages.Rule{rule}, true},
		{"an expression", []messages.State{pulse, red}, nil, true},
		{"with a speed", []messages.State{slow, red}, nil, true},
		{"with a description", []messages.State{described, red}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := messages.ApplyRequest{States: tt.given, Rules: tt.rules}
			y, got := roundTrip(t, c)
			want := c
			if !tt.wantOff {
				want.States = nil
				for _, s := range c.States {
					if s.Name != "off" {
						want.States = append(want.States, s)
					}
				}
			}
			sameConfig(t, y, got, want)
			if has := strings.Contains(string(y), "name: off\n"); has != tt.wantOff {
				t.Errorf("off written: %v, want %v:\n%s", has, tt.wantOff, y)
			}
		})
	}
}

// The rest of a configuration round-trips too: a schedule without its
// next time, which the light computes; vars empty but not nil;
// confirm_empty; a rule's priority and enabled only when they are not
// the defaults.
func TestToYAMLRoundTrip(t *testing.T) {
	next := time.Date(2026, 11, 22, 19, 0, 0, 0, time.UTC)
	speed := 0
	tests := []struct {
		name        string
		given, want messages.ApplyRequest
		wantText    string // in what is written
		whole       bool   // wantText is all that is written
	}{
		{name: "a schedule's next time is not written",
			given: messages.ApplyRequest{States: []messages.State{{Name: "a"}},
				Schedules: []messages.Schedule{{Name: "s", Cron: "@hourly", Fires: "tick", Next: &next}}},
			want: messages.ApplyRequest{States: []messages.State{{Name: "a"}},
				Schedules: []messages.Schedule{{Name: "s", Cron: "@hourly", Fires: "tick"}}},
			wantText: "schedules:\n  - name: s\n    cron: '@hourly'\n    fires: tick\n"},
		{name: "empty vars are written, to clear the light's",
			given:    messages.ApplyRequest{States: []messages.State{{Name: "a"}}, Vars: map[string]json.RawMessage{}},
			wantText: "vars: {}\n"},
		{name: "no vars are not written, to keep the light's",
			given:    messages.ApplyRequest{States: []messages.State{{Name: "a"}}},
			wantText: "states:\n  - name: a\n    r: 0\n    g: 0\n    b: 0\n", whole: true},
		{name: "how to apply is not written",
			given:    messages.ApplyRequest{States: []messages.State{{Name: "a"}}, ConfirmEmpty: true, DryRun: true},
			want:     messages.ApplyRequest{States: []messages.State{{Name: "a"}}},
			wantText: "states:\n  - name: a\n    r: 0\n    g: 0\n    b: 0\n", whole: true},
		{name: "nothing",
			wantText: "{}\n", whole: true},
		{name: "priority and enabled when not the defaults",
			given: messages.ApplyRequest{States: []messages.State{{Name: "a"}}, Rules: []messages.Rule{
				{ID: "r1", From: "*", On: "button_hold", To: "off", Priority: 100, Enabled: true},
				{ID: "r2", From: "a/*", On: "x", To: "a", Priority: -5, Enabled: false},
				{ID: "r3", From: "off", On: "y", To: "a", Enabled: true}}},
			wantText: `rules:
  - id: r1
    from: '*'
    on: button_hold
    to: off
    priority: 100
  - id: r2
    from: a/*
    on: x
    to: a
    priority: -5
    enabled: false
  - id: r3
    from: off
    on: y
    to: a
`},
		{name: "room and aliases, names with spaces and apostrophes plain",
			given:    messages.ApplyRequest{Room: "bedroom", Aliases: []string{"bedroom lamp", "kid's lamp", "o'clock", "2nd"}},
			wantText: "room: bedroom\naliases:\n  - bedroom lamp\n  - kid's lamp\n  - o'clock\n  - 2nd\n", whole: true},
		{name: "names YAML would read as something else are quoted",
			given:    messages.ApplyRequest{Room: "yes", Aliases: []string{"null", "1", "-"}},
			wantText: "room: yes\naliases:\n  - \"null\"\n  - \"1\"\n  - '-'\n", whole: true},
		{name: "a speed of 0 is written",
			given:    messages.ApplyRequest{States: []messages.State{{Name: "a", Speed: &speed}}},
			wantText: "    speed: 0\n"},
		{name: "a tool without params, with hosts",
			given: messages.ApplyRequest{States: []messages.State{{Name: "a"}},
				Tools: []messages.Tool{{Name: "t", Code: "return await fetch('https://x.example/a?b=1')", Hosts: []string{"x.example", "y.example:8443"}}}},
			wantText: "tools:\n  - name: t\n    code: return await fetch('https://x.example/a?b=1')\n    hosts:\n      - x.example\n      - y.example:8443\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			if reflect.ValueOf(want).IsZero() {
				want = tt.given
			}
			y, got := roundTrip(t, tt.given)
			sameConfig(t, y, got, want)
			if tt.whole && string(y) != tt.wantText || !strings.Contains(string(y), tt.wantText) {
				t.Errorf("got\n%s\nwant (whole: %v)\n%s", y, tt.whole, tt.wantText)
			}
		})
	}
}

// A field added to the configuration must be added to ToYAML, and then
// here.
func TestToYAMLKnowsEveryField(t *testing.T) {
	tests := []struct {
		v    any
		want string
	}{
		{messages.ApplyRequest{}, "states rules vars initial on_state power_on transition_ms room aliases state schedules tools sources functions layers confirm_empty dry_run if_seq"},
		{messages.Layer{}, "name rules fires_left deadline until restore began_state"},
		{messages.State{}, "name r g b speed description"},
		{messages.Rule{}, "id from on to fade_ms condition action priority enabled"},
		{messages.Schedule{}, "name cron sun offset lat lon tz fires next"},
		{messages.Tool{}, "name description params code returns hosts"},
		{messages.Function{}, "name description params code"},
	}
	for _, tt := range tests {
		typ := reflect.TypeOf(tt.v)
		var names []string
		for i := range typ.NumField() {
			name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			names = append(names, name)
		}
		if got := strings.Join(names, " "); got != tt.want {
			t.Errorf("%s has the fields %q; ToYAML knows %q", typ, got, tt.want)
		}
	}
}

// Keys come in the order a light is read.
func TestToYAMLKeyOrder(t *testing.T) {
	y, err := messages.ToYAML(exportConfig())
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(y, &doc); err != nil {
		t.Fatal(err)
	}
	keys := func(n *yaml.Node) string {
		var k []string
		for i := 0; i < len(n.Content); i += 2 {
			k = append(k, n.Content[i].Value)
		}
		return strings.Join(k, " ")
	}
	top := doc.Content[0]
	field := func(n *yaml.Node, key string) *yaml.Node {
		for i := 0; i < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				return n.Content[i+1]
			}
		}
		t.Fatalf("no %s in %s", key, keys(n))
		return nil
	}
	tests := []struct {
		name string
		n    *yaml.Node
		want string
	}{
		{"top", top, "room aliases initial states rules functions layers vars schedules tools sources"},
		{"a layer", field(top, "layers").Content[0], "name fires_left began_state rules"},
		{"a layer with a deadline, not restoring", field(top, "layers").Content[1], "name deadline restore began_state rules"},
		{"a layer until", field(top, "layers").Content[2], "name until began_state rules"},
		{"a state", field(top, "states").Content[3], "name r g b speed description"},
		{"a rule", field(top, "rules").Content[5], "id from on to condition action priority"},
		{"a schedule", field(top, "schedules").Content[0], "name cron tz fires"},
		{"a function", field(top, "functions").Content[0], "name description params code"},
		{"a function without params", field(top, "functions").Content[1], "name code"},
		{"a tool", field(top, "tools").Content[0], "name description params code returns hosts"},
		{"a tool's params", field(field(field(top, "tools").Content[0], "params"), "properties"), "city units"},
		{"a source", field(top, "sources").Content[0], "name type interval_ms fetch store"},
	}
	for _, tt := range tests {
		if got := keys(tt.n); got != tt.want {
			t.Errorf("%s: keys %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestToYAMLErrors(t *testing.T) {
	state := func(r messages.Channel) []messages.State {
		return []messages.State{{Name: "x", R: r}}
	}
	tests := []struct {
		name  string
		given messages.ApplyRequest
		want  string
	}{
		{"NaN", messages.ApplyRequest{States: state(messages.Num(math.NaN()))}, "messages: states[0]: r: NaN is not a number JSON or YAML can hold"},
		{"infinity", messages.ApplyRequest{States: state(messages.Num(math.Inf(1)))}, "messages: states[0]: r: +Inf is not a number JSON or YAML can hold"},
		{"a var that is not JSON", messages.ApplyRequest{Vars: map[string]json.RawMessage{"v": json.RawMessage(`{"a":`)}}, "messages: vars.v: invalid JSON: unexpected EOF"},
		{"a number too big", messages.ApplyRequest{Vars: map[string]json.RawMessage{"v": json.RawMessage(`1e400`)}}, "messages: vars.v: invalid JSON: number 1e400 does not fit a 64-bit float"},
		{"params with trailing data", messages.ApplyRequest{Tools: []messages.Tool{{Name: "t", Params: json.RawMessage(`{} {}`)}}}, "messages: tools[0].params: invalid JSON: data after the value"},
		{"a source that is not JSON", messages.ApplyRequest{Sources: []json.RawMessage{json.RawMessage(`{"name"}`)}}, "messages: sources[0]: invalid JSON: invalid character '}' after object key"},
	}
	for _, tt := range tests {
		_, err := messages.ToYAML(tt.given)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: error %v, want %s", tt.name, err, tt.want)
		}
	}
}

// exportConfig is a light as people configure one: the demo light, a
// warm pulse at night when it is not raining, a tool and a source that
// read the weather.
func exportConfig() messages.ApplyRequest {
	two := 2
	deadline := time.Date(2026, 11, 25, 20, 30, 0, 500_000_000, time.UTC)
	state := func(name string, r, g, b float64, desc string) messages.State {
		return messages.State{Name: name, R: messages.Num(r), G: messages.Num(g), B: messages.Num(b), Description: desc}
	}
	rule := func(id, from, on, to string, priority int) messages.Rule {
		return messages.Rule{ID: id, From: from, On: on, To: to, Priority: priority, Enabled: true}
	}
	speed := 50
	evening := rule("r6", "off", "evening", "night/warm", 10)
	evening.Condition = "getData('weather').sky !== 'rain' && is_evening(19)"
	evening.Action = "setData('evenings', (getData('evenings') || 0) + 1)"
	cold := rule("r7", "night/warm", "button_double_click", "blue", 0)
	cold.Enabled = false
	return messages.ApplyRequest{
		Room:    "bedroom",
		Aliases: []string{"bedroom lamp", "bedside", "kid's lamp"},
		Initial: "off",
		States: []messages.State{
			state("off", 0, 0, 0, ""),
			state("red", 255, 0, 0, "plain red"),
			state("green", 0, 255, 0, "plain green"),
			state("blue", 0, 0, 255, "plain blue"),
			{Name: "night/warm", R: messages.Expr("sin(frame*0.05)*40+200"), G: messages.Num(80), B: messages.Num(0.5), Speed: &speed,
				Description: "a slow warm pulse 🌙"},
		},
		Rules: []messages.Rule{
			rule("r1", "off", "button_click", "red", 0),
			rule("r2", "red", "button_click", "green", 0),
			rule("r3", "green", "button_click", "blue", 0),
			rule("r4", "blue", "button_click", "red", 0),
			rule("r5", "*", "button_hold", "off", 100),
			evening,
			cold,
		},
		Vars: map[string]json.RawMessage{
			"weather":  json.RawMessage(`{"temp":21.5,"sky":"clear","wind":{"speed_kmh":12,"gusts":null}}`),
			"evenings": json.RawMessage(`0`),
			"away":     json.RawMessage(`false`),
		},
		Schedules: []messages.Schedule{{Name: "evening", Cron: "0 19 * * *", TZ: "Europe/Paris", Fires: "evening"}},
		Tools: []messages.Tool{{
			Name:        "get_weather",
			Description: "The temperature and the sky in a city, from Open-Meteo.",
			Params:      json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","description":"a city name"},"units":{"type":"string","enum":["metric","imperial"]}},"required":["city"]}`),
			Code: `const res = await fetch("https://api.open-meteo.com/v1/forecast?city=" + encodeURIComponent(params.city));
if (!res.ok) {
  throw new Error("open-meteo: " + res.status);
}
const w = await res.json();
return {temp: w.current.temperature_2m, sky: w.current.rain > 0 ? "rain" : "clear"};
`,
			Returns: json.RawMessage(`{"type":"object","properties":{"temp":{"type":"number"},"sky":{"type":"string"}}}`),
			Hosts:   []string{"api.open-meteo.com"},
		}},
		Sources: []json.RawMessage{
			json.RawMessage(`{"name":"weather","type":"poll","interval_ms":600000,"fetch":{"tool":"get_weather","args":{"city":"Paris"}},"store":{"weather":"result"}}`),
		},
		Functions: []messages.Function{
			{Name: "is_evening", Description: "true from the given hour (default 18) to midnight, UTC", Params: []string{"from"},
				Code: "const h = new Date(now()).getUTCHours();\nreturn h >= (from === undefined ? 18 : from);"},
			{Name: "warm", Code: "return getData('weather').temp > 20;"},
		},
		Layers: []messages.Layer{
			{Name: "next3", FiresLeft: &two, Restore: true, BeganState: "off", Rules: []messages.Rule{
				{ID: "r8", From: "*", On: "button_click", To: "red", Priority: 0, Enabled: true}}},
			{Name: "party", Deadline: &deadline, Restore: false, BeganState: "red", Rules: []messages.Rule{
				{ID: "r9", From: "red", On: "button_click", To: "green", Enabled: true},
				{ID: "r10", From: "green", On: "button_click", To: "red", Enabled: true}}},
			{Name: "guests", Until: "getData('guests') === 0", Restore: true, BeganState: "off", Rules: []messages.Rule{
				{ID: "r11", From: "*", On: "button_hold", To: "blue", Condition: "!warm()", Priority: 5, Enabled: true}}},
		},
	}
}

func TestToYAMLGolden(t *testing.T) {
	c := exportConfig()
	y, got := roundTrip(t, c)
	want := c
	want.States = c.States[1:] // the plain off is not written
	sameConfig(t, y, got, want)
	golden(t, "export.yaml", y)
}

func ExampleToYAML() {
	y, err := messages.ToYAML(messages.ApplyRequest{
		States: []messages.State{
			{Name: "off", R: messages.Num(0), G: messages.Num(0), B: messages.Num(0)},
			{Name: "red", R: messages.Num(255), G: messages.Num(0), B: messages.Num(0)},
		},
		Rules: []messages.Rule{
			{From: "off", On: "button_click", To: "red", Enabled: true},
			{From: "*", On: "button_hold", To: "off", Priority: 100, Enabled: true},
		},
	})
	if err != nil {
		panic(err)
	}
	fmt.Print(string(y))
	// Output:
	// states:
	//   - name: red
	//     r: 255
	//     g: 0
	//     b: 0
	// rules:
	//   - from: off
	//     on: button_click
	//     to: red
	//   - from: '*'
	//     on: button_hold
	//     to: off
	//     priority: 100
}
