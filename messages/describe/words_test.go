package describe_test

import (
	"encoding/json"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/describe"
)

var update = flag.Bool("update", false, "write testdata/events.golden")

// eventTypes reads the event types messages declares, In* and Out*
// constants, as "in fired" and "out state": a type added there without a
// sample below fails TestEveryEventInWords.
func eventTypes(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../*.go")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					dir := ""
					switch {
					case strings.HasPrefix(name.Name, "In") && len(name.Name) > 2 && name.Name[2] >= 'A' && name.Name[2] <= 'Z':
						dir = "in"
					case strings.HasPrefix(name.Name, "Out") && len(name.Name) > 3 && name.Name[3] >= 'A' && name.Name[3] <= 'Z':
						dir = "out"
					default:
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					out = append(out, dir+" "+strings.Trim(lit.Value, `"`))
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Every input and output type of messages is put in words: a sample of
// each (of each config op and output variant) is described without JSON,
// by a case of its own rather than the fallback; the lines are golden.
func TestEveryEventInWords(t *testing.T) {
	time.Local = time.UTC // the golden times do not depend on where it runs
	at := time.Date(2026, 11, 24, 19, 0, 0, 0, time.UTC)
	fade30m := 30 * 60 * 1000
	j := func(v any) json.RawMessage {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	two, ms, no, rule := 2, int64(90_000), false, "r2"
	rules := []messages.Rule{{From: "off", On: "button_click", To: "red", Enabled: true},
		{ID: "r9", From: "*", On: "evening", To: "cosy", Condition: "getData('away') !== true", Priority: 5}}
	samples := []struct {
		typ  string // "in fired"
		data any
	}{
		{"in fired", messages.InFiredData{Transition: "button_click", Source: "button"}},
		{"in fired", messages.InFiredData{Transition: "evening"}},
		{"in state", messages.InStateData{Name: "red"}},
		{"in power", messages.InPowerData{On: true}},
		{"in power", messages.InPowerData{}},
		{"in power", messages.InPowerData{Toggle: true}},
		{"in brightness", messages.InBrightnessData{Percent: 40}},
		{"in brightness", messages.InBrightnessData{Delta: 10}},
		{"in brightness", messages.InBrightnessData{Delta: -10}},
		{"in color", messages.InColorData{R: 255, G: 165, As: "orange"}},
		{"in color", messages.InColorData{R: 18, G: 52, B: 86}},
		{"in var", messages.InVarData{Name: "guests", Value: json.RawMessage(`{"names":["ann","bob"],"n":2}`)}},
		{"in var", messages.InVarData{Name: "guests", Unset: true}},
		{"in config", messages.InConfigData{Op: messages.OpApply, States: []messages.State{{Name: "off"}, {Name: "cosy"}}, Rules: rules,
			Vars: map[string]json.RawMessage{"n": json.RawMessage("1")}, VarsOp: messages.VarsReplace, Initial: "off",
			Schedules: []messages.Schedule{{Name: "evening", Cron: "0 19 * * *", Fires: "evening"}}}},
		{"in config", messages.InConfigData{Op: messages.OpApply, States: []messages.State{{Name: "off"}}, VarsOp: messages.VarsKeep, RollbackTo: 12}},
		{"in config", messages.InConfigData{Op: messages.OpCreateState, States: []messages.State{{Name: "cosy"}}}},
		{"in config", messages.InConfigData{Op: messages.OpDeleteState, Name: "cosy"}},
		{"in config", messages.InConfigData{Op: messages.OpAppendRules, Rules: rules[:1]}},
		{"in config", messages.InConfigData{Op: messages.OpAppendRules, Rules: rules, Layer: &messages.LayerSpec{Name: "party", Fires: &two, Ms: &ms, Restore: &no}}},
		{"in config", messages.InConfigData{Op: messages.OpDeleteRules, IDs: []string{"r1", "r2"}}},
		{"in config", messages.InConfigData{Op: messages.OpDeleteRules, Match: &messages.RuleMatch{On: "button_click"}}},
		{"in config", messages.InConfigData{Op: messages.OpEnableRules, IDs: []string{"r6"}}},
		{"in config", messages.InConfigData{Op: messages.OpDisableRules, IDs: []string{"r6"}}},
		{"in config", messages.InConfigData{Op: messages.OpCreateSchedule, Schedules: []messages.Schedule{{Name: "evening", Cron: "0 19 * * *", TZ: "Europe/Paris", Fires: "evening"}}}},
		{"in config", messages.InConfigData{Op: messages.OpDeleteSchedule, Name: "evening"}},
		{"in config", messages.InConfigData{Op: messages.OpDefineTool, Tools: []messages.Tool{{Name: "get_price"}}}},
		{"in config", messages.InConfigData{Op: messages.OpDeleteTool, Name: "get_price"}},
		{"in config", messages.InConfigData{Op: messages.OpCreateSource, Sources: []json.RawMessage{json.RawMessage(`{"name":"btc","type":"poll"}`)}}},
		{"in config", messages.InConfigData{Op: messages.OpDeleteSource, Name: "btc"}},
		{"in config", messages.InConfigData{Op: messages.OpDefineFunction, Functions: []messages.Function{{Name: "mix"}}}},
		{"in config", messages.InConfigData{Op: messages.OpDeleteFunction, Name: "mix"}},
		{"in config", messages.InConfigData{Op: messages.OpDeleteLayer, Name: "party"}},
		{"in config", messages.InConfigData{Op: messages.OpDefineTransition, Sources: []json.RawMessage{json.RawMessage(`{"name":"door_open"}`)}}},
		{"in config", messages.InConfigData{Op: messages.OpDeleteTransition, Name: "door_open"}},
		{"in config", messages.InConfigData{Op: messages.OpSetNames, Room: "Bedroom", Aliases: []string{"bedroom lamp", "Bedside"}}},
		{"in config", messages.InConfigData{Op: messages.OpSetNames, KeepRoom: true}},
		{"in config", messages.InConfigData{Op: messages.OpSetNames, Room: "hall", KeepAliases: true}},
		{"in timer", messages.InTimerData{Name: "nap", Deadline: at, Late: true}},
		{"in schedule", messages.InScheduleData{Name: "evening", At: at}},
		{"in data", messages.InDataData{Source: "btc", Vars: map[string]json.RawMessage{"btc_price": json.RawMessage("67012.5"), "trend": json.RawMessage(`"up"`)}}},
		{"in upgrade", messages.InUpgradeData{Level: 1}},
		{"in intent", messages.InIntentData{Phrase: "movie night", Verb: messages.VerbSetState, Arg: "cinema"}},
		{"in intent", messages.InIntentData{Phrase: "movie night", Delete: true}},
		{"in layer", messages.InLayerData{Name: "party", Deadline: at}},
		{"out state", messages.OutStateData{From: "off", To: "red", Rule: &rule, Transition: "button_click", Changed: true}},
		{"out var", messages.OutVarData{Name: "n", Value: json.RawMessage("3")}},
		{"out brightness", messages.OutBrightnessData{Percent: 40, From: 100}},
		{"out brightness", messages.OutBrightnessData{Percent: 100, From: 10, FadeMs: &fade30m}},
		{"out state", messages.OutStateData{From: "off", To: "warm", Changed: true, FadeMs: &fade30m}},
		{"out state", messages.OutStateData{From: "off", To: "color", Changed: true, Color: &messages.ColorSet{R: 255, G: 165, As: "orange", Created: true}}},
		{"out state", messages.OutStateData{From: "color", To: "color", Color: &messages.ColorSet{R: 255, B: 255, As: "#ff00ff"}}},
		{"out timer", messages.OutTimerData{Op: messages.TimerSet, Name: "nap", Deadline: at}},
		{"out timer", messages.OutTimerData{Op: messages.TimerCancel, Name: "nap", Deadline: at}},
		{"out timer", messages.OutTimerData{Op: messages.TimerFire, Name: "nap", Deadline: at, Late: true}},
		{"out schedule", messages.OutScheduleData{Op: "set", Schedule: messages.Schedule{Name: "evening", Cron: "0 19 * * *", Fires: "evening"}, Next: &at}},
		{"out schedule", messages.OutScheduleData{Op: "delete", Schedule: messages.Schedule{Name: "evening", Cron: "0 19 * * *", Fires: "evening"}}},
		{"out schedule", messages.OutScheduleData{Op: "fire", Schedule: messages.Schedule{Name: "evening", Cron: "0 19 * * *", Fires: "evening"}, Next: &at}},
		{"out config", messages.OutConfigData{Op: messages.OpAppendRules, Rules: []string{"r6"}}},
		{"out config", messages.OutConfigData{Op: messages.OpApply, States: []string{"off", "cosy"}, Rules: []string{"r1", "r2"}}},
		{"out config", messages.OutConfigData{Op: messages.OpDeleteState}},
		{"out ignored", messages.OutIgnoredData{Transition: "x", Reason: "no rule matches x in state off"}},
		{"out error", messages.OutErrorData{Code: 404, Kind: messages.ErrorRejected, Error: "no state nope"}},
		{"out restart", messages.OutRestartData{Actor: "demo/source", Reason: "panic: boom", Restarts: 2}},
		{"out upgrade", messages.OutUpgradeData{From: 0, To: 1}},
		{"out gap", messages.OutGapData{From: 10, To: 20, Reason: "the Pi's disk was full"}},
		{"out intent", messages.OutIntentData{Phrase: "movie night", Verb: messages.VerbSetState, Arg: "cinema"}},
		{"out layer", messages.OutLayerData{Name: "party", EndedBy: messages.LayerEndMs}},
		{"out agent", messages.OutAgentData{Session: "s1", Step: 3, Kind: messages.AgentKindTool,
			Call: &messages.ToolStep{Tool: "createState", Args: json.RawMessage(`{"name":"cosy","r":255}`), OK: true}}},
		{"out agent", messages.OutAgentData{Session: "s1", Step: 4, Kind: messages.AgentKindApproval, Approval: "s1-4", Text: `replaces the existing state "red"`,
			Call: &messages.ToolStep{Tool: "createState", Args: json.RawMessage(`{"name":"red","r":200}`), Tier: messages.TierConfirm}}},
	}
	covered := map[string]bool{}
	var golden strings.Builder
	var d describe.Events
	for _, s := range samples {
		dir, typ, _ := strings.Cut(s.typ, " ")
		covered[s.typ] = true
		raw := j(s.data)
		var line, fallback string
		if dir == "in" {
			env := messages.Input("demo", typ, "cli-1", at, raw)
			line, fallback = describe.Input(env), describe.Value(raw)
		} else {
			env := messages.Output("demo", 7, 0, typ, at, raw)
			line, fallback = d.Output(env), typ+" "+describe.Value(raw)
		}
		if strings.Contains(line, `{"`) || strings.Contains(line, `":`) {
			t.Errorf("%s %s: JSON in %q", s.typ, raw, line)
		}
		if strings.Join(strings.Fields(line), " ") == strings.Join(strings.Fields(fallback), " ") {
			t.Errorf("%s %s: no words of its own, only the fallback %q", s.typ, raw, line)
		}
		golden.WriteString(s.typ + "\t" + line + "\n")
	}
	for _, typ := range eventTypes(t) {
		if !covered[typ] {
			t.Errorf("event type %q has no sample here: put it in words in describe (Input or Events.Output) and add a sample", typ)
		}
	}
	path := filepath.Join("testdata", "events.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(golden.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run TestEveryEventInWords -update writes it)", err)
	}
	if golden.String() != string(want) {
		t.Errorf("descriptions differ from %s (-update rewrites it):\n%s", path, golden.String())
	}
}
