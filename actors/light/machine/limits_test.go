package machine_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/messages"
)

// upgraded returns a light at the machine's level, as a light is after
// its first start with this lumen.
func upgraded(t *testing.T) *light {
	t.Helper()
	l := newLight(t)
	l.ok(messages.InUpgrade, fmt.Sprintf(`{"level":%d}`, machine.Level))
	l.config(`{"op":"apply","states":[{"name":"red","r":255,"g":0,"b":0}],"rules":[{"from":"off","on":"button_click","to":"red"}]}`)
	return l
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Every limit, at it (taken) and one past it (refused with a 400 that
// names the limit).
func TestLimits(t *testing.T) {
	name := func(n int) string { return strings.Repeat("n", n) }
	// A JSON string value of n bytes, quotes included.
	value := func(n int) string { return jsonString(strings.Repeat("v", n-2)) }
	// A condition of n bytes.
	cond := func(n int) string { return "true" + strings.Repeat(" ", n-4) }
	channel := func(n int) string { return "now()%256" + strings.Repeat(" ", n-9) }
	states := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, `,{"name":"s%d","r":1}`, i)
		}
		return `{"op":"apply","states":[` + b.String()[1:] + `]}`
	}
	rules := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(`,{"from":"off","on":"x","to":"red"}`)
		}
		return `{"op":"apply","states":[{"name":"red","r":1}],"rules":[` + b.String()[1:] + `]}`
	}
	config := func(format string, args ...any) struct{ typ, payload string } {
		return in(messages.InConfig, fmt.Sprintf(format, args...))
	}
	tests := []struct {
		name    string
		at, one struct{ typ, payload string }
		says    string
	}{
		{"state name",
			config(`{"op":"create_state","states":[{"name":%q,"r":1}]}`, name(64)),
			config(`{"op":"create_state","states":[{"name":%q,"r":1}]}`, name(65)),
			"state name \"nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn\"… is 65 characters long; names are at most 64 characters"},
		{"state name in characters, not bytes",
			config(`{"op":"create_state","states":[{"name":%q,"r":1}]}`, strings.Repeat("é", 64)),
			config(`{"op":"create_state","states":[{"name":%q,"r":1}]}`, strings.Repeat("é", 65)),
			"65 characters long"},
		{"state name without spaces; / keeps its meaning",
			config(`{"op":"create_state","states":[{"name":"room/reading_lamp","r":1}]}`),
			config(`{"op":"create_state","states":[{"name":"reading lamp","r":1}]}`),
			`the state name "reading lamp" holds ' '; names are printable characters without spaces`},
		{"no control characters",
			config(`{"op":"create_state","states":[{"name":"a-b","r":1}]}`),
			config(`{"op":"create_state","states":[{"name":"a\u0007b","r":1}]}`),
			`holds '\a'`},
		{"rule id",
			config(`{"op":"append_rules","rules":[{"id":%q,"from":"off","on":"x","to":"red"}]}`, name(64)),
			config(`{"op":"append_rules","rules":[{"id":%q,"from":"off","on":"x","to":"red"}]}`, name(65)),
			"rule id name"},
		{"transition of a rule",
			config(`{"op":"append_rules","rules":[{"from":"off","on":%q,"to":"red"}]}`, name(64)),
			config(`{"op":"append_rules","rules":[{"from":"off","on":%q,"to":"red"}]}`, name(65)),
			"transition name"},
		{"fired transition",
			in(messages.InFired, `{"transition":"`+name(64)+`"}`),
			in(messages.InFired, `{"transition":"`+name(65)+`"}`),
			"transition name"},
		{"state to go to",
			in(messages.InState, `{"name":"red"}`),
			in(messages.InState, `{"name":"`+name(65)+`"}`),
			"state name"},
		{"variable name",
			in(messages.InVar, `{"name":"`+name(64)+`","value":1}`),
			in(messages.InVar, `{"name":"`+name(65)+`","value":1}`),
			"variable name"},
		{"variable value",
			in(messages.InVar, `{"name":"v","value":`+value(64<<10)+`}`),
			in(messages.InVar, `{"name":"v","value":`+value(64<<10+1)+`}`),
			`the value of variable "v" is 65537 bytes as JSON; a variable holds at most 64 KiB`},
		{"variables of an apply",
			config(`{"op":"apply","states":[{"name":"red","r":1}],"vars":{"v":%s}}`, value(64<<10)),
			config(`{"op":"apply","states":[{"name":"red","r":1}],"vars":{"v":%s}}`, value(64<<10+1)),
			"vars: the value of variable"},
		{"condition",
			config(`{"op":"append_rules","rules":[{"from":"off","on":"x","to":"red","condition":%q}]}`, cond(4096)),
			config(`{"op":"append_rules","rules":[{"from":"off","on":"x","to":"red","condition":%q}]}`, cond(4097)),
			"'s condition is 4097 bytes; an expression is at most 4 KiB"},
		{"action",
			config(`{"op":"append_rules","rules":[{"from":"off","on":"x","to":"red","action":%q}]}`, cond(4096)),
			config(`{"op":"append_rules","rules":[{"from":"off","on":"x","to":"red","action":%q}]}`, cond(4097)),
			"'s action is 4097 bytes"},
		{"color channel",
			config(`{"op":"create_state","states":[{"name":"c","r":%q}]}`, channel(4096)),
			config(`{"op":"create_state","states":[{"name":"c","r":%q}]}`, channel(4097)),
			`state "c"'s channel r is 4097 bytes`},
		{"schedule name",
			config(`{"op":"create_schedule","schedules":[{"name":%q,"cron":"@hourly","fires":"x"}]}`, name(64)),
			config(`{"op":"create_schedule","schedules":[{"name":%q,"cron":"@hourly","fires":"x"}]}`, name(65)),
			"schedule name"},
		{"schedule's transition",
			config(`{"op":"create_schedule","schedules":[{"name":"s","cron":"@hourly","fires":%q}]}`, name(64)),
			config(`{"op":"create_schedule","schedules":[{"name":"s","cron":"@hourly","fires":%q}]}`, name(65)),
			"transition name"},
		{"schedules at most once a second",
			config(`{"op":"create_schedule","schedules":[{"name":"s","cron":"@every 1s","fires":"x"}]}`),
			config(`{"op":"create_schedule","schedules":[{"name":"s","cron":"@every 999ms","fires":"x"}]}`),
			"schedules run at most once a second"},
		{"states", config("%s", states(1000)), config("%s", states(1001)),
			"the configuration has 1001 states; a light has at most 1000 (besides off)"},
		{"rules", config("%s", rules(5000)), config("%s", rules(5001)),
			"the configuration has 5001 rules; a light has at most 5000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := upgraded(t)
			if r := l.apply(tt.at.typ, tt.at.payload); r.Err != nil {
				t.Fatalf("at the limit: refused: %s", r.Err.Error)
			}
			l = upgraded(t)
			r := l.apply(tt.one.typ, tt.one.payload)
			if r.Err == nil || r.Err.Code != 400 || !strings.Contains(r.Err.Error, tt.says) {
				t.Fatalf("one past the limit: %v, want a 400 that says %q", outputs(t, r), tt.says)
			}
			if len(r.Err.Error) > 1000 {
				t.Errorf("the refusal is %d bytes: it should not repeat what it refuses", len(r.Err.Error))
			}
		})
	}
}

// Actions are held to the limits too: a name or a value over them
// makes the rule fail, and the next one is tried.
func TestLimitsInActions(t *testing.T) {
	for _, action := range []string{
		"setData('" + strings.Repeat("n", 65) + "', 1)", // the fast path's shape
		"setData('v', 'x'.repeat(70000))",
		"startTimer('" + strings.Repeat("n", 65) + "', 1000)",
	} {
		l := upgraded(t)
		l.config(fmt.Sprintf(`{"op":"append_rules","rules":[{"from":"off","on":"go","to":"red","priority":1,"action":%s},{"from":"off","on":"go","to":"off"}]}`, jsonString(action)))
		r := l.fire("go")
		if got := outputs(t, r); len(got) < 2 || !strings.HasPrefix(got[0], "error ") || !strings.Contains(got[0], "at most") || r.State != "off" {
			t.Errorf("%s: %v", action, got)
		}
	}
}

// A light applies the inputs journaled before its upgrade as it did then:
// an old journal replays to the same light. After it, the limits hold, and
// a snapshot keeps the level.
func TestLevelIsJournaled(t *testing.T) {
	long := strings.Repeat("n", 65)
	l := newLight(t)
	if l.m.Level() != 0 {
		t.Fatalf("a new machine is at level %d, want 0 until its upgrade input", l.m.Level())
	}
	l.config(`{"op":"apply","states":[{"name":"` + long + `","r":1}],"rules":[{"from":"off","on":"x","to":"` + long + `"}]}`)
	r := l.ok(messages.InUpgrade, `{"level":1}`)
	if got := outputs(t, r); len(got) != 1 || got[0] != `upgrade {"from":0,"to":1}` || l.m.Level() != 1 {
		t.Fatalf("upgrade: %v, level %d", got, l.m.Level())
	}
	if r := l.fire("x"); r.State != long {
		t.Errorf("the state named before the limits is %q", r.State)
	}
	if r := l.apply(messages.InConfig, `{"op":"create_state","states":[{"name":"`+long+`x","r":1}]}`); r.Err == nil {
		t.Errorf("a long name after the upgrade was taken")
	}
	m := l.restored()
	if m.Level() != 1 || m.State() != long {
		t.Errorf("restored: level %d state %q", m.Level(), m.State())
	}
	newer := machine.Level + 1
	for payload, says := range map[string]string{
		fmt.Sprintf(`{"level":%d}`, newer): fmt.Sprintf("level %d is newer than this lumen knows", newer),
		`{"level":0}`:                      "a level never goes down",
	} {
		if r := l.apply(messages.InUpgrade, payload); r.Err == nil || !strings.Contains(r.Err.Error, says) {
			t.Errorf("upgrade %s: %v", payload, outputs(t, r))
		}
	}
}

// At level 1 a tool's params must be a JSON schema that compiles: the
// tool manager checks every call's arguments against it. Before, any
// object was taken, and still is when replayed.
func TestParamsSchemaIsChecked(t *testing.T) {
	const tool = `{"op":"define_tool","tools":[{"name":"t","code":"return 1","params":{"type":"nmber"}}]}`
	if r := upgraded(t).apply(messages.InConfig, tool); r.Err == nil || !strings.Contains(r.Err.Error, `tool "t": params: the schema is not a valid JSON schema`) {
		t.Errorf("at level 1: %v", outputs(t, r))
	}
	if r := newLight(t).apply(messages.InConfig, tool); r.Err != nil {
		t.Errorf("at level 0: %s", r.Err.Error)
	}
}
