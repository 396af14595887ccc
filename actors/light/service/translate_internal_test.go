package service

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/actors/light"

	"github.com/lumen-home/lumen/messages"
)

func TestTranslateTools(t *testing.T) {
	config := func(t *testing.T, msg any) messages.InConfigData {
		t.Helper()
		c, ok := msg.(*light.Command)
		if !ok || c.Type != messages.InConfig {
			t.Fatalf("got %#v, want a config command", msg)
		}
		var in messages.InConfigData
		if err := messages.Decode(c.Data, &in); err != nil {
			t.Fatal(err)
		}
		return in
	}
	tool := messages.Tool{Name: "hello", Code: "return {tools: 1};", Hosts: []string{"api.example.com"}, Params: json.RawMessage(`{"type":"object"}`)}
	one, _ := json.Marshal(tool)
	list, _ := json.Marshal(map[string]any{"tools": []messages.Tool{tool, {Name: "b", Code: "return 2"}}})

	tests := []struct {
		name  string
		verb  string
		body  string
		check func(t *testing.T, msg any)
	}{
		{"one tool", messages.VerbDefineTool, string(one), func(t *testing.T, msg any) {
			if in := config(t, msg); in.Op != messages.OpDefineTool || !reflect.DeepEqual(in.Tools, []messages.Tool{tool}) {
				t.Errorf("got %+v", in)
			}
		}},
		{"a list", messages.VerbDefineTool, string(list), func(t *testing.T, msg any) {
			if in := config(t, msg); in.Op != messages.OpDefineTool || len(in.Tools) != 2 || in.Tools[1].Name != "b" {
				t.Errorf("got %+v", in)
			}
		}},
		{"delete", messages.VerbDeleteTool, `{"name":"hello"}`, func(t *testing.T, msg any) {
			if in := config(t, msg); in.Op != messages.OpDeleteTool || in.Name != "hello" {
				t.Errorf("got %+v", in)
			}
		}},
		{"list", messages.VerbListTools, `{}`, func(t *testing.T, msg any) {
			if _, ok := msg.(*light.ListTools); !ok {
				t.Errorf("got %#v", msg)
			}
		}},
		{"apply carries tools", messages.VerbApply, `{"confirm_empty":true,"states":[],"rules":[],"tools":[{"name":"a","code":"return 1"}]}`, func(t *testing.T, msg any) {
			if in := config(t, msg); len(in.Tools) != 1 || in.Tools[0].Name != "a" {
				t.Errorf("got %+v", in)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, err := translate(tt.verb, []byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, msg)
		})
	}

	bads := []struct{ verb, body, says string }{
		{messages.VerbDefineTool, `{"tools":[]}`, "no tool given"},
		{messages.VerbDefineTool, `{"name":"x","code":"return 1","cod":""}`, `cod: unknown field`},
		{messages.VerbDeleteTool, `{}`, `"name" is required`},
		{messages.VerbListTools, `{"x":1}`, "list_tools takes {}"},
	}
	for _, b := range bads {
		_, err := translate(b.verb, []byte(b.body))
		if err == nil || !strings.Contains(err.Error(), b.says) {
			t.Errorf("%s %s: error %v, want one that says %q", b.verb, b.body, err, b.says)
		}
	}
}

// create_state takes one state, or {"states":[…]}: which is said by the
// body's top-level fields, not by the word "states" anywhere in it.
func TestTranslateCreateState(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string // state names, nil for a refusal
	}{
		{"one state", `{"name":"red","r":255,"g":0,"b":0}`, []string{"red"}},
		{"a state named states", `{"name":"states","r":1,"g":2,"b":3}`, []string{"states"}},
		{"a description that is the word states", `{"name":"calm","r":0,"g":40,"b":80,"description":"states"}`, []string{"calm"}},
		{"a list", `{"states":[{"name":"a","r":1,"g":1,"b":1},{"name":"b","r":2,"g":2,"b":2}]}`, []string{"a", "b"}},
		{"an empty list", `{"states":[]}`, nil},
		{"a list with a stray field", `{"states":[],"name":"x"}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, err := translate(messages.VerbCreateState, []byte(tt.body))
			if tt.want == nil {
				if err == nil {
					t.Fatalf("accepted: %#v", msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var in messages.InConfigData
			if err := messages.Decode(msg.(*light.Command).Data, &in); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, s := range in.States {
				names = append(names, s.Name)
			}
			if in.Op != messages.OpCreateState || !reflect.DeepEqual(names, tt.want) {
				t.Fatalf("got %s %v, want %v", in.Op, names, tt.want)
			}
		})
	}
}

// A configuration with no states and no rules would empty the light: it
// is refused unless the request says it means it.
func TestTranslateEmptyApply(t *testing.T) {
	for _, body := range []string{``, `{}`, `null`, `{"states":[],"rules":[]}`, `{"vars":{"n":1}}`} {
		if _, err := translate(messages.VerbApply, []byte(body)); err == nil || !strings.Contains(err.Error(), `"confirm_empty":true`) {
			t.Errorf("apply %q: %v", body, err)
		}
	}
	msg, err := translate(messages.VerbApply, []byte(`{"confirm_empty":true}`))
	if err != nil {
		t.Fatal(err)
	}
	var in messages.InConfigData
	if err := messages.Decode(msg.(*light.Command).Data, &in); err != nil || in.Op != messages.OpApply || len(in.States)+len(in.Rules) != 0 {
		t.Fatalf("confirmed empty apply: %+v %v", in, err)
	}
	if _, err := translate(messages.VerbApply, []byte(`{"rules":[{"from":"*","on":"x","to":"off"}]}`)); err != nil {
		t.Errorf("rules only: %v", err)
	}
}

// enable_rules takes ids, and enabled (default true); disable_rules
// takes ids. Each journals one of two ops: the input says what it does.
func TestTranslateEnableRules(t *testing.T) {
	tests := []struct {
		name, verb, body string
		want             string // op and ids, or what the refusal says
	}{
		{"disable", messages.VerbEnableRules, `{"ids":["r3"],"enabled":false}`, "disable_rules [r3]"},
		{"enable several", messages.VerbEnableRules, `{"ids":["r1","r2"],"enabled":true}`, "enable_rules [r1 r2]"},
		{"no ids", messages.VerbEnableRules, `{"enabled":true}`, `"ids" is required`},
		{"empty ids", messages.VerbEnableRules, `{"ids":[],"enabled":false}`, `"ids" is required`},
		{"enabled by default", messages.VerbEnableRules, `{"ids":["r1"]}`, "enable_rules [r1]"},
		{"enabled not a boolean", messages.VerbEnableRules, `{"ids":["r1"],"enabled":"no"}`, "enabled"},
		{"an unknown field", messages.VerbEnableRules, `{"ids":["r1"],"enabled":true,"on":"x"}`, `on: unknown field`},
		{"disable_rules", messages.VerbDisableRules, `{"ids":["r1","r4"]}`, "disable_rules [r1 r4]"},
		{"disable_rules without ids", messages.VerbDisableRules, `{}`, `"ids" is required`},
		{"disable_rules takes no enabled", messages.VerbDisableRules, `{"ids":["r1"],"enabled":true}`, `enabled: unknown field`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, err := translate(tt.verb, []byte(tt.body))
			got := ""
			if err != nil {
				got = err.Error()
			} else {
				var in messages.InConfigData
				if err := messages.Decode(msg.(*light.Command).Data, &in); err != nil {
					t.Fatal(err)
				}
				got = fmt.Sprintf("%s %v", in.Op, in.IDs)
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// append_rules' layer is checked before anything is journaled, and goes
// into the input as given; delete_layer takes a name.
func TestTranslateLayer(t *testing.T) {
	tests := []struct {
		name, verb, body string
		want             string // the input's op, layer and name, or what the refusal says
	}{
		{"fires", messages.VerbAppendRules, `{"rules":[{"from":"*","on":"button_click","to":"red"}],"layer":{"name":"next3","fires":3}}`, `append_rules {"name":"next3","fires":3} `},
		{"until, not restoring", messages.VerbAppendRules, `{"rules":[{"from":"*","on":"a","to":"red"}],"layer":{"until":"getData('x') === 1","restore":false}}`, `append_rules {"until":"getData('x') === 1","restore":false} `},
		{"no lifetime", messages.VerbAppendRules, `{"rules":[{"from":"*","on":"a","to":"red"}],"layer":{}}`, "give exactly one of fires (how many times its rules fire), ms (how long it lasts) or until"},
		{"two lifetimes", messages.VerbAppendRules, `{"rules":[{"from":"*","on":"a","to":"red"}],"layer":{"fires":1,"until":"true"}}`, "give exactly one of"},
		{"zero fires", messages.VerbAppendRules, `{"rules":[{"from":"*","on":"a","to":"red"}],"layer":{"fires":0}}`, "fires is 0"},
		{"too long", messages.VerbAppendRules, `{"rules":[{"from":"*","on":"a","to":"red"}],"layer":{"ms":2000000000000}}`, "ms is 2000000000000"},
		{"a bad name", messages.VerbAppendRules, `{"rules":[{"from":"*","on":"a","to":"red"}],"layer":{"name":"a b","fires":1}}`, "names are printable characters without spaces"},
		{"an unknown field", messages.VerbAppendRules, `{"rules":[{"from":"*","on":"a","to":"red"}],"layer":{"fires":1,"times":2}}`, "layer.times: unknown field"},
		{"delete", messages.VerbDeleteLayer, `{"name":"next3"}`, `delete_layer null next3`},
		{"delete without a name", messages.VerbDeleteLayer, `{}`, `"name" is required`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, err := translate(tt.verb, []byte(tt.body))
			got := ""
			if err != nil {
				got = err.Error()
			} else {
				var in messages.InConfigData
				if err := messages.Decode(msg.(*light.Command).Data, &in); err != nil {
					t.Fatal(err)
				}
				l, _ := json.Marshal(in.Layer)
				got = fmt.Sprintf("%s %s %s", in.Op, l, in.Name)
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// A dry run is the apply's own input, marked: the same checks refuse
// it (an empty configuration, a source below the minimum interval).
func TestTranslateApplyDryRun(t *testing.T) {
	const config = `{"states":[{"name":"red","r":255}],"rules":[{"from":"off","on":"button_click","to":"red"}]}`
	real, err := translate(messages.VerbApply, []byte(config))
	if err != nil {
		t.Fatal(err)
	}
	dry, err := translate(messages.VerbApply, []byte(config[:len(config)-1]+`,"dry_run":true}`))
	if err != nil {
		t.Fatal(err)
	}
	if r, d := real.(*light.Command), dry.(*light.Command); r.DryRun || !d.DryRun || r.Type != d.Type || !bytes.Equal(r.Data, d.Data) {
		t.Errorf("apply %+v\ndry run %+v: want the same input, marked", r, d)
	}
	for body, says := range map[string]string{
		`{"dry_run":true}`: `"confirm_empty":true`,
		`{"dry_run":true,"states":[{"name":"red","r":1}],"rules":[],"sources":[{"name":"w","interval_ms":1000,"fetch":{"tool":"t"},"store":{"x":"result"}}]}`: "interval_ms",
	} {
		if _, err := translate(messages.VerbApply, []byte(body)); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("dry run %s: %v, want a refusal that says %q", body, err, says)
		}
	}
}

// learn_intent keeps a phrase in its normal form and refuses one tied to
// its moment or context, or an action that is no set_state, fire or
// everyday control (checked as that verb checks its body);
// delete_intent finds a phrase however it is said.
func TestTranslateIntents(t *testing.T) {
	tests := []struct {
		verb, body string
		want       string // the intent input's data; "" for a refusal
		refusal    string // in the refusal
	}{
		{messages.VerbLearnIntent, `{"phrase":"I'm going to read a book!","verb":"set_state","arg":"reading"}`,
			`{"phrase":"i'm going read book","verb":"set_state","arg":"reading"}`, ""},
		{messages.VerbLearnIntent, `{"phrase":"Make it cosy please","verb":"fire","arg":"cosy_time"}`,
			`{"phrase":"cosy","verb":"fire","arg":"cosy_time"}`, ""},
		{messages.VerbLearnIntent, `{"phrase":"make it like that","verb":"set_state","arg":"reading"}`, "", `"that"`},
		{messages.VerbLearnIntent, `{"phrase":"go back","verb":"set_state","arg":"reading"}`, "", `"back"`},
		{messages.VerbLearnIntent, `{"phrase":"reading for 10 minutes","verb":"set_state","arg":"reading"}`, "", `"for"`},
		{messages.VerbLearnIntent, `{"phrase":"reading until dinner","verb":"set_state","arg":"reading"}`, "", `"until"`},
		{messages.VerbLearnIntent, `{"phrase":"reading then off","verb":"set_state","arg":"reading"}`, "", `"then"`},
		{messages.VerbLearnIntent, `{"phrase":"undo","verb":"set_state","arg":"reading"}`, "", `"undo"`},
		{messages.VerbLearnIntent, `{"phrase":"reading again","verb":"set_state","arg":"reading"}`, "", `"again"`},
		{messages.VerbLearnIntent, `{"phrase":"please","verb":"set_state","arg":"reading"}`, "", "filler"},
		{messages.VerbLearnIntent, `{"phrase":"cosy","verb":"create_state","arg":"cosy"}`, "", "never a configuration change"},
		{messages.VerbLearnIntent, `{"phrase":"cosy","verb":"set_state","arg":""}`, "", "arg"},
		{messages.VerbLearnIntent, `{"phrase":"cosy","verb":"set_state","arg":"cosy","extra":1}`, "", "extra"},
		{messages.VerbLearnIntent, `{"phrase":"way too bright","verb":"set_brightness","arg":"-20"}`,
			`{"phrase":"way too bright","verb":"set_brightness","arg":"-20"}`, ""},
		{messages.VerbLearnIntent, `{"phrase":"like the sea","verb":"set_color","arg":"teal"}`,
			`{"phrase":"like sea","verb":"set_color","arg":"teal"}`, ""},
		{messages.VerbLearnIntent, `{"phrase":"like the sea","verb":"set_color","arg":"seaweed"}`, "", "no color I know"},
		{messages.VerbLearnIntent, `{"phrase":"hot","verb":"set_color","arg":"90000K"}`, "", "out of range"},
		{messages.VerbLearnIntent, `{"phrase":"kill it","verb":"power","arg":"maybe"}`, "", "on or off"},
		{messages.VerbLearnIntent, `{"phrase":"blinding","verb":"set_brightness","arg":"300"}`, "", "1..100"},
		{messages.VerbDeleteIntent, `{"phrase":"Make it COSY, please."}`, `{"phrase":"cosy","delete":true}`, ""},
		{messages.VerbDeleteIntent, `{"phrase":"please"}`, "", "phrase"},
	}
	for _, tt := range tests {
		msg, err := translate(tt.verb, []byte(tt.body))
		if tt.want == "" {
			if err == nil || !strings.Contains(err.Error(), tt.refusal) {
				t.Errorf("%s %s: got %#v, %v; want a refusal saying %s", tt.verb, tt.body, msg, err, tt.refusal)
			}
			continue
		}
		c, ok := msg.(*light.Command)
		if err != nil || !ok || c.Type != messages.InIntent || string(c.Data) != tt.want {
			t.Errorf("%s %s: got %#v, %v; want intent %s", tt.verb, tt.body, msg, err, tt.want)
		}
	}
	if msg, err := translate(messages.VerbIntents, []byte(`{}`)); err != nil {
		t.Errorf("intents: %v", err)
	} else if _, ok := msg.(*light.ListIntents); !ok {
		t.Errorf("intents: %#v", msg)
	}
}

// A schedule without tz is journaled with the daemon's zone, by
// create_schedule, apply and whatif alike; a zone the light would refuse
// is refused before it is journaled; without a zone (no WithZone) the
// input keeps no tz, which the light reads as UTC.
func TestTranslateScheduleZone(t *testing.T) {
	paris := checks{zone: "Europe/Paris"}
	for _, tc := range []struct {
		name, verb, body string
		c                checks
		want             string // the journaled schedules, or the error
	}{
		{"create without tz", messages.VerbCreateSchedule, `{"name":"e","cron":"0 19 * * *","fires":"x"}`, paris, `"tz":"Europe/Paris"`},
		{"create with tz", messages.VerbCreateSchedule, `{"name":"e","cron":"0 19 * * *","tz":"Asia/Tokyo","fires":"x"}`, paris, `"tz":"Asia/Tokyo"`},
		{"create, no zone", messages.VerbCreateSchedule, `{"name":"e","cron":"0 19 * * *","fires":"x"}`, checks{}, `"schedules":[{"name":"e","cron":"0 19 * * *","fires":"x"}]`},
		{"apply", messages.VerbApply, `{"states":[{"name":"off"}],"schedules":[{"name":"a","cron":"@hourly","fires":"x"},{"name":"b","cron":"@hourly","tz":"UTC","fires":"x"}]}`, paris,
			`"schedules":[{"name":"a","cron":"@hourly","tz":"Europe/Paris","fires":"x"},{"name":"b","cron":"@hourly","tz":"UTC","fires":"x"}]`},
		{"whatif", messages.VerbWhatIf, `{"config":{"states":[{"name":"off"}],"schedules":[{"name":"a","cron":"@hourly","fires":"x"}]}}`, paris, `"tz":"Europe/Paris"`},
		{"unknown zone", messages.VerbCreateSchedule, `{"name":"e","cron":"0 19 * * *","tz":"Mars/Olympus","fires":"x"}`, paris,
			`schedule "e": unknown time zone "Mars/Olympus"; use an IANA time zone like Europe/Paris, or leave tz out for the daemon's`},
		{"Local", messages.VerbApply, `{"states":[{"name":"off"}],"schedules":[{"name":"a","cron":"@hourly","tz":"Local","fires":"x"}]}`, paris,
			`schedule "a": tz Local depends on the machine`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg, err := translateWith(tc.verb, []byte(tc.body), tc.c)
			var got string
			switch m := msg.(type) {
			case *light.Command:
				got = string(m.Data)
			case *WhatIfReq:
				got = string(m.Config)
			}
			if err != nil {
				got = err.Error()
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("got %s (%v), want %s", got, err, tc.want)
			}
		})
	}
}

// The light decodes exactly the verbs the table gives it.
func TestDecodersAreTheLightsVerbs(t *testing.T) {
	want := messages.VerbsOf(messages.PartLight)
	got := slices.Sorted(maps.Keys(decoders))
	if !slices.Equal(got, want) {
		t.Errorf("decoders of %v, the table's light verbs are %v", got, want)
	}
}

// apply carries the names people use for the light to its input as
// given, dry run or not: the light normalises them, so that replay does
// the same. Names the light would refuse are refused before they are
// journaled.
func TestTranslateApplyNames(t *testing.T) {
	for _, body := range []string{
		`{"room":"Bedroom","aliases":["Bedroom Lamp","bedside"],"states":[{"name":"red","r":255}],"rules":[]}`,
		`{"room":"Bedroom","aliases":["Bedroom Lamp","bedside"],"states":[{"name":"red","r":255}],"rules":[],"dry_run":true}`,
	} {
		msg, err := translate(messages.VerbApply, []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		var in messages.InConfigData
		if err := messages.Decode(msg.(*light.Command).Data, &in); err != nil {
			t.Fatal(err)
		}
		if in.Room != "Bedroom" || strings.Join(in.Aliases, "|") != "Bedroom Lamp|bedside" {
			t.Errorf("%s: input room %q, aliases %q", body, in.Room, in.Aliases)
		}
	}
	for body, says := range map[string]string{
		`{"room":"bed/room","states":[{"name":"red","r":255}],"rules":[]}`:                        `room "bed/room" holds '/'`,
		`{"aliases":["lamp","Lamp"],"states":[{"name":"red","r":255}],"rules":[],"dry_run":true}`: `aliases[1] "Lamp" is aliases[0] "lamp" again`,
	} {
		if _, err := translate(messages.VerbApply, []byte(body)); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("%s: %v, want a refusal that says %q", body, err, says)
		}
	}
}

// set_names journals the parts given, as given, and keeps the others;
// "" and [] clear; {} and names apply would refuse are refused before
// anything is journaled, with apply's sentences.
func TestTranslateSetNames(t *testing.T) {
	for _, tc := range []struct{ body, input string }{
		{`{"room":"Bedroom","aliases":["Bedroom Lamp","bedside"]}`, `{"op":"set_names","room":"Bedroom","aliases":["Bedroom Lamp","bedside"]}`},
		{`{"room":"bedroom"}`, `{"op":"set_names","room":"bedroom","keep_aliases":true}`},
		{`{"aliases":["bedside"]}`, `{"op":"set_names","aliases":["bedside"],"keep_room":true}`},
		{`{"room":""}`, `{"op":"set_names","keep_aliases":true}`},
		{`{"aliases":[]}`, `{"op":"set_names","keep_room":true}`},
		{`{"room":"","aliases":[]}`, `{"op":"set_names"}`},
	} {
		msg, err := translate(messages.VerbSetNames, []byte(tc.body))
		if err != nil {
			t.Errorf("%s: %v", tc.body, err)
			continue
		}
		c := msg.(*light.Command)
		if c.Type != messages.InConfig || string(c.Data) != tc.input {
			t.Errorf("%s: %s input %s, want config %s", tc.body, c.Type, c.Data, tc.input)
		}
	}
	for body, says := range map[string]string{
		`{}`:                           `set_names sets nothing; give "room", "aliases" or both`,
		`{"room":null}`:                `set_names sets nothing`,
		`{"room":"bed/room"}`:          `room "bed/room" holds '/'`,
		`{"aliases":["lamp","Lamp"]}`:  `aliases[1] "Lamp" is aliases[0] "lamp" again`,
		`{"room":"x","floor":"first"}`: `floor`,
		`{"aliases":"bedside"}`:        `send {"room":"bedroom","aliases":["bedroom lamp","bedside"]}`,
	} {
		_, err := translate(messages.VerbSetNames, []byte(body))
		if br := (*badRequest)(nil); !errors.As(err, &br) || br.code != 400 || !strings.Contains(err.Error(), says) {
			t.Errorf("%s: %v, want a 400 that says %q", body, err, says)
		}
	}
}
