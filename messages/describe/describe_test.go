package describe_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/describe"
)

func TestTools(t *testing.T) {
	tests := []struct {
		name string
		r    messages.ToolsReply
		want []string
	}{
		{"nothing at all", messages.ToolsReply{}, []string{"light demo has no tools"}},
		{"every kind", messages.ToolsReply{
			Tools: []messages.Tool{{Name: "weather", Description: "the weather", Hosts: []string{"api.example.com"}}, {Name: "hello", Description: "mine"}},
			Plugins: []messages.PluginTool{{Name: "hello", Status: messages.PluginReady},
				{Name: "broken", Status: messages.PluginFailed, Error: "not wasm"}},
			Builtin: []messages.BuiltinTool{{Name: "get_time", Description: "the time"}},
		}, []string{
			"weather              the weather  (hosts: api.example.com)",
			"hello                mine  (hosts: none)  [the plugin hello runs instead]",
			"hello                plugin, ready",
			"broken               plugin, failed: not wasm",
			"get_time             built-in: the time",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			describe.Tools(&b, "demo", tt.r)
			if got := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n"); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", b.String(), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestLayers(t *testing.T) {
	two, zero := 2, 0
	at := time.Date(2026, 11, 24, 12, 0, 30, 0, time.Local)
	rule := func(id string) messages.Rule {
		return messages.Rule{ID: id, From: "*", On: "button_click", To: "red", Enabled: true}
	}
	var b bytes.Buffer
	err := describe.Layers(&b, []messages.Layer{
		{Name: "next3", FiresLeft: &two, Restore: true, BeganState: "off", Rules: []messages.Rule{rule("r3"), rule("r4")}},
		{Name: "spent", FiresLeft: &zero, Restore: true, BeganState: "white", Rules: []messages.Rule{rule("r5")}},
		{Name: "party", Deadline: &at, BeganState: "off", Rules: []messages.Rule{rule("r6")}},
		{Name: "guests", Until: "getData('guests') === 0", Restore: true, BeganState: "off", Rules: []messages.Rule{rule("r7")}},
	}, at.Add(-90*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	want := `NAME    ENDS                                         RESTORES  BEGAN IN  RULES
next3   after 2 more firings                         yes       off       r3 r4
spent   at the next input its rules match            yes       white     r5
party   at 2026-11-24 12:00:30 (in 1m30s)            no        off       r6
guests  after an input when getData('guests') === 0  yes       off       r7

layer next3:
ID  FROM  ON            TO   CONDITION  ACTION  PRIORITY  ENABLED
r3  *     button_click  red  -          -       0         yes
r4  *     button_click  red  -          -       0         yes
`
	if got := b.String(); !strings.HasPrefix(got, want) {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestOutputsAndSources(t *testing.T) {
	rule := "r2"
	out := func(typ string, cause uint64, d any) messages.Envelope {
		b, _ := json.Marshal(d)
		return messages.Output("k", cause, 0, typ, time.Unix(0, 0), b)
	}
	agentStep := func(d messages.OutAgentData) []byte {
		env, err := messages.AgentStep("k", d, time.Unix(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(env)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	var d describe.Events
	tests := []struct{ got, want string }{
		{d.Output(out(messages.OutState, 7, messages.OutStateData{From: "off", To: "red", Rule: &rule, Transition: "button_click"})),
			"state  off → red  [button_click by rule r2] (input 7)"},
		{d.Output(out(messages.OutVar, 7, messages.OutVarData{Name: "n", Value: json.RawMessage("3")})), "var    n = 3 (input 7)"},
		{d.Output(out(messages.OutError, 0, messages.OutErrorData{Kind: messages.ErrorRender, Error: "nope"})), "error  render nope"},
		{d.Output(out(messages.OutAgent, 0, messages.OutAgentData{Session: "s", Step: 2, Kind: messages.AgentKindAsk, Who: "cli", Text: "make it   red"})),
			"agent  s#2 ask by cli: make it red"},
		// A rule that threw: its id once, and the next rule tried; the
		// input's "no rule matches" then means no other rule did.
		{d.Output(out(messages.OutError, 9, messages.OutErrorData{Kind: messages.ErrorException, Rule: "r47", Error: "rule r47: its condition threw ReferenceError: x is not defined and the rule was skipped; fix the JavaScript"})),
			"error  exception in rule r47: its condition threw ReferenceError: x is not defined and the rule was skipped; fix the JavaScript; the next matching rule was tried (input 9)"},
		{d.Output(out(messages.OutIgnored, 9, messages.OutIgnoredData{Transition: "y", Reason: "no rule matches y in state off"})),
			"ignored no other rule matches y in state off (input 9)"},
		{d.Output(out(messages.OutIgnored, 10, messages.OutIgnoredData{Transition: "y", Reason: "no rule matches y in state off"})),
			"ignored no rule matches y in state off (input 10)"},
		{d.Output(out(messages.OutError, 11, messages.OutErrorData{Kind: messages.ErrorTimeout, Rule: "r5", Error: "rule r5 ran longer than an expression may"})),
			"error  timeout in rule r5: ran longer than an expression may; the next matching rule was tried (input 11)"},
		{d.Output(out(messages.OutLayer, 12, messages.OutLayerData{Name: "next3", EndedBy: messages.LayerEndFires, Restored: true})),
			"layer  next3 ended: its rules fired as often as it said, back to the state it began in (input 12)"},
		{d.Output(out(messages.OutLayer, 13, messages.OutLayerData{Name: "party", EndedBy: messages.LayerEndMs, Late: true})),
			"layer  party ended: its time was up (late: the daemon was down), the light stays where it is (input 13)"},
		{d.Output(out(messages.OutState, 12, messages.OutStateData{From: "red", To: "off", Transition: "button_click"})),
			"state  red → off  [button_click, a layer ended] (input 12)"},
		{d.Output(out(messages.OutUpgrade, 1, messages.OutUpgradeData{From: 0, To: 1})),
			"upgrade the inputs from here are checked at level 1 (was 0): limits on names, sizes and schedules (input 1)"},
		{d.Output(out(messages.OutIntent, 12, messages.OutIntentData{Phrase: "movie night", Verb: "set_state", Arg: "cinema"})),
			`intent "movie night" → set_state cinema learned (input 12)`},
		{d.Output(out(messages.OutIntent, 13, messages.OutIntentData{Phrase: "movie night", Verb: "set_state", Arg: "cinema", Delete: true})),
			`intent "movie night" (set_state cinema) forgotten (input 13)`},
		{d.Output(out(messages.OutIntent, 14, messages.OutIntentData{Phrase: "movie night", Verb: "set_state", Arg: "cinema", Delete: true, Reason: "state cinema was deleted"})),
			`intent "movie night" (set_state cinema) dropped: state cinema was deleted (input 14)`},
		// An approval says why when the agent said (a create over an
		// existing name), and only then.
		{describe.AgentStep(agentStep(messages.OutAgentData{Session: "s", Step: 3, Kind: messages.AgentKindApproval, Approval: "s-3",
			Text: `replaces the existing data source "doorbell"`, Call: &messages.ToolStep{Tool: "createDataSource", Args: json.RawMessage(`{"name":"doorbell"}`)}}), "s"),
			`  ? createDataSource (name: doorbell) needs your approval (it replaces the existing data source "doorbell"): lumen approve s-3  (or lumen reject s-3; on the light: hold approves, click rejects)`},
		{describe.AgentStep(agentStep(messages.OutAgentData{Session: "s", Step: 3, Kind: messages.AgentKindApproval, Approval: "s-3",
			Call: &messages.ToolStep{Tool: "defineTool", Args: json.RawMessage(`{"name":"get_price"}`)}}), "s"),
			`  ? defineTool (name: get_price) needs your approval: lumen approve s-3  (or lumen reject s-3; on the light: hold approves, click rejects)`},
		{describe.Call(messages.ToolStep{Tool: "setState", Args: json.RawMessage(`{"name":"red"}`), Error: "no state red"}),
			`✗ setState (name: red): no state red`},
		{describe.Source(json.RawMessage(`{"name":"door","type":"nats","subject":"home.doorbell","store":{"who":"result.who"},"fires":"ring"}`),
			messages.SourcesReply{LastRuns: map[string]time.Time{"door": now.Add(-90 * time.Second)}}, now),
			"door             nats home.doorbell  store who=result.who  fires ring  last run 1m30s ago"},
		{describe.Source(json.RawMessage(`{"name":"hook","type":"webhook","fires":"ring"}`),
			messages.SourcesReply{WebhookURLs: map[string]string{"hook": "http://127.0.0.1:8080/hooks/demo/hook"}}, now),
			"hook             webhook POST http://127.0.0.1:8080/hooks/demo/hook  fires ring"},
		{describe.Source(json.RawMessage(`{"name":"hook","type":"webhook","fires":"ring"}`), messages.SourcesReply{}, now),
			"hook             webhook (the daemon serves no HTTP, --http off or its port taken: nothing receives it)  fires ring"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got  %q\nwant %q", tt.got, tt.want)
		}
	}
}

func TestHistory(t *testing.T) {
	at := time.Date(2026, 11, 24, 8, 5, 0, 0, time.Local)
	for _, tc := range []struct {
		name string
		h    messages.HistoryReply
		want string
	}{
		{"none", messages.HistoryReply{Light: "hall"}, "light hall has no configuration change in its journal\n"},
		{"two", messages.HistoryReply{Light: "hall", Changes: []messages.ConfigChange{
			{Seq: 3, Time: at, By: "cli", Summary: "+ state orange"},
			{Seq: 12, Time: at.Add(time.Minute), By: "agent:default:2", Summary: "+ rule r6"},
		}}, `SEQ  TIME                 BY               CHANGES
3    2026-11-24 08:05:00  cli              + state orange
12   2026-11-24 08:06:00  agent:default:2  + rule r6
`},
	} {
		var b bytes.Buffer
		if err := describe.History(&b, tc.h); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			t.Errorf("%s: got\n%s\nwant\n%s", tc.name, b.String(), tc.want)
		}
	}
}

func TestLights(t *testing.T) {
	now := time.Date(2026, 11, 24, 8, 5, 0, 0, time.Local)
	on := true
	var b bytes.Buffer
	err := describe.Lights(&b, []describe.LightRow{
		{Light: "kitchen", State: "red", Color: "#ff0000", LastInput: "fired", LastAt: now.Add(-90 * time.Second), Sources: 2, Agent: &on, Groups: []string{"down", "all"}},
		{Light: "hall", State: "off"},
		{Light: "attic", Err: "light \"attic\" did not answer within 30s"},
		{Light: "porch", Absent: describe.Unreachable("garagepi", false, now.Add(-time.Hour), now)},
		{Light: "shed", Absent: describe.Unreachable("garagepi", true, time.Time{}, now)},
	}, now)
	if err != nil {
		t.Fatal(err)
	}
	want := `LIGHT    STATE  COLOR    LAST INPUT        SOURCES  AGENT  GROUPS
kitchen  red    #ff0000  fired, 1m30s ago  2        on     down,all
hall     off    -        -                 0        -      -
attic    (light "attic" did not answer within 30s)
porch    unreachable: its Pi garagepi is disconnected since 07:05:00 (1h0m0s ago)
shed     unreachable: not running on its Pi garagepi, which is connected
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	if got := describe.Ago(time.Time{}, now); got != "?" {
		t.Errorf("Ago of no time: %q", got)
	}
}

// The schedules table: a cron with its zone, a sun schedule with its
// place, and a sun that does not rise until days later said so.
func TestSchedules(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { x := now.Add(d); return &x }
	lat, lon := 69.65, 18.96
	var b bytes.Buffer
	err := describe.Schedules(&b, []messages.Schedule{
		{Name: "evening", Cron: "0 19 * * *", TZ: "Europe/Paris", Fires: "evening", Next: at(6 * time.Hour)},
		{Name: "wake", Sun: "sunrise", Offset: "-30m", Lat: &lat, Lon: &lon, Fires: "wake", Next: at(45 * 24 * time.Hour)},
		{Name: "lamps", Sun: "sunset", Lat: &lat, Lon: &lon, Fires: "evening", Next: at(3 * time.Hour)},
	}, now)
	if err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"NAME     WHEN", "evening  0 19 * * *    Europe/Paris", "wake     sunrise -30m  69.65,18.96", "(no sunrise there before then)"} {
		if !strings.Contains(out, want) {
			t.Errorf("schedules lack %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "before then") != 1 {
		t.Errorf("only the sunrise weeks away is a gap:\n%s", out)
	}
}
