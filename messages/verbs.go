package messages

import (
	"reflect"
	"slices"
	"strings"
	"sync"
)

// Part is who answers a verb on the light's one service instance.
type Part string

// The parts of a light that answer its verbs.
const (
	PartLight  Part = "light"  // its state machine (actors/light)
	PartDevice Part = "device" // its hardware (actors/device)
	PartTools  Part = "tools"  // its tool runner (actors/tool)
	PartAgent  Part = "agent"  // its agent (agent)
)

// Verb is one row of the wire contract's verbs (lumen.<light>.cmd.<verb>):
// every list of verbs and every dispatch is derived from VerbTable, so a
// new verb is one row here and one handler where its part serves it.
type Verb struct {
	Name string
	Part Part
	// Request is the type of the body, nil when the verb takes {} (or,
	// for talk, audio).
	Request reflect.Type
	// Fleet: the fleet's and groups' commands take it too
	// (lumen.fleet.cmd.<verb>, lumen.group.<g>.cmd.<verb>).
	Fleet bool
	// House: a Pi may ask it of any light of the house, through the hub
	// (lumen.sys.house.<light>.cmd.<verb>); a light's configuration, its
	// agent and its approvals stay with its own Pi and the house's users.
	House bool
	// Slow: the answer may take minutes (a model's turn, a read of the
	// whole journal), so a door waits longer for it.
	Slow bool
	// CLI is the lumen command a person types for it, when that is not
	// the verb itself: a sentence of the light that names the verb names
	// this instead for a CLI user.
	CLI string
}

func typeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

// VerbTable is every verb, sorted by name: a copy of the table, which
// is made once.
func VerbTable() []Verb { return slices.Clone(verbTable()) }

// verbTable is the table, made once (the door looks a verb up on every
// request); nothing changes its rows.
var verbTable = sync.OnceValue(func() []Verb {
	return []Verb{
		{Name: VerbAppendRules, Part: PartLight, Request: typeOf[RulesRequest](), CLI: "lumen rule add"},
		{Name: VerbApply, Part: PartLight, Request: typeOf[ApplyRequest]()},
		{Name: VerbApprove, Part: PartAgent, Request: typeOf[ApprovalRequest]()},
		{Name: VerbAsk, Part: PartAgent, Request: typeOf[AskRequest](), Slow: true},
		{Name: VerbButton, Part: PartDevice, Request: typeOf[ButtonRequest]()},
		{Name: VerbCreateSchedule, Part: PartLight, Request: typeOf[Schedule](), CLI: "lumen schedule add"},
		{Name: VerbCreateSource, Part: PartLight, CLI: "lumen source add"}, // a source definition (datasource.Def)
		{Name: VerbCreateState, Part: PartLight, Request: typeOf[State](), CLI: "lumen state add"},
		{Name: VerbData, Part: PartLight, Request: typeOf[InDataData]()},
		{Name: VerbDefineFunction, Part: PartLight, Request: typeOf[Function](), CLI: "lumen function define"},
		{Name: VerbDefineTool, Part: PartLight, Request: typeOf[Tool](), CLI: "lumen tool define"},
		{Name: VerbDefineTransition, Part: PartLight, Request: typeOf[TransitionRequest]()},
		{Name: VerbDeleteFunction, Part: PartLight, Request: typeOf[NameRequest](), CLI: "lumen function rm"},
		{Name: VerbDeleteIntent, Part: PartLight, Request: typeOf[DeleteIntentRequest](), CLI: "lumen intents rm"},
		{Name: VerbDeleteLayer, Part: PartLight, Request: typeOf[NameRequest](), CLI: "lumen layer rm"},
		{Name: VerbDeleteRules, Part: PartLight, Request: typeOf[DeleteRulesRequest](), CLI: "lumen rule rm"},
		{Name: VerbDeleteSchedule, Part: PartLight, Request: typeOf[NameRequest](), CLI: "lumen schedule rm"},
		{Name: VerbDeleteSource, Part: PartLight, Request: typeOf[NameRequest](), CLI: "lumen source rm"},
		{Name: VerbDeleteState, Part: PartLight, Request: typeOf[NameRequest](), CLI: "lumen state rm"},
		{Name: VerbDeleteTool, Part: PartLight, Request: typeOf[NameRequest](), CLI: "lumen tool rm"},
		{Name: VerbDeleteTransition, Part: PartLight, Request: typeOf[NameRequest](), CLI: "lumen source rm --transition"},
		{Name: VerbDisableRules, Part: PartLight, Request: typeOf[IDsRequest](), CLI: "lumen rule disable"},
		{Name: VerbEnableRules, Part: PartLight, Request: typeOf[EnableRulesRequest](), CLI: "lumen rule enable"},
		{Name: VerbFire, Part: PartLight, Request: typeOf[FireRequest](), Fleet: true, House: true},
		{Name: VerbGet, Part: PartLight, Request: typeOf[GetRequest](), Fleet: true, Slow: true},
		{Name: VerbGPIO, Part: PartDevice, Request: typeOf[GPIORequest]()},
		{Name: VerbHistory, Part: PartLight, Slow: true},
		{Name: VerbIntents, Part: PartLight},
		{Name: VerbLearnIntent, Part: PartLight, Request: typeOf[LearnIntentRequest]()},
		{Name: VerbLED, Part: PartDevice},
		{Name: VerbListSources, Part: PartLight, CLI: "lumen source ls"},
		{Name: VerbListTools, Part: PartLight, CLI: "lumen tool ls"},
		{Name: VerbPower, Part: PartLight, Request: typeOf[PowerRequest](), Fleet: true, House: true},
		{Name: VerbReject, Part: PartAgent, Request: typeOf[ApprovalRequest]()},
		{Name: VerbRollback, Part: PartLight, Request: typeOf[RollbackRequest](), Slow: true},
		{Name: VerbRunTool, Part: PartTools, Request: typeOf[RunToolRequest](), CLI: "lumen tool run"},
		{Name: VerbSessions, Part: PartAgent, Request: typeOf[SessionsRequest]()},
		{Name: VerbSetBrightness, Part: PartLight, Request: typeOf[BrightnessRequest](), Fleet: true, House: true, CLI: "lumen brightness"},
		{Name: VerbSetColor, Part: PartLight, Request: typeOf[ColorRequest](), Fleet: true, House: true, CLI: "lumen color"},
		{Name: VerbSetNames, Part: PartLight, Request: typeOf[NamesRequest](), CLI: "lumen names"},
		{Name: VerbSetState, Part: PartLight, Request: typeOf[SetStateRequest](), Fleet: true, House: true, CLI: "lumen state"},
		{Name: VerbSetVar, Part: PartLight, Request: typeOf[InVarData](), Fleet: true, CLI: "lumen var set"},
		{Name: VerbTalk, Part: PartAgent, Slow: true},
		{Name: VerbToggle, Part: PartLight, Fleet: true, House: true},
		{Name: VerbWhatIf, Part: PartLight, Request: typeOf[WhatIfRequest](), Slow: true},
		{Name: VerbWhy, Part: PartLight, Request: typeOf[WhyRequest](), Slow: true},
	}
})

// LookupVerb is name's row of VerbTable.
func LookupVerb(name string) (Verb, bool) {
	table := verbTable()
	i, ok := slices.BinarySearchFunc(table, name, func(v Verb, name string) int { return strings.Compare(v.Name, name) })
	if !ok {
		return Verb{}, false
	}
	return table[i], true
}

// verbsWhere is the names of the rows keep keeps, sorted.
func verbsWhere(keep func(Verb) bool) []string {
	var out []string
	for _, v := range verbTable() {
		if keep(v) {
			out = append(out, v.Name)
		}
	}
	return out
}

// Verbs returns every verb of lumen.<light>.cmd.<verb>, sorted: the
// light's, its device's, its tools' and its agent's, which all answer on
// the light's one service instance. A request for any other verb gets a
// 404 that lists these.
func Verbs() []string { return verbsWhere(func(Verb) bool { return true }) }

// VerbsOf are the verbs part answers, sorted.
func VerbsOf(part Part) []string { return verbsWhere(func(v Verb) bool { return v.Part == part }) }

// FleetVerbs are the verbs a fleet or group command takes
// (lumen.fleet.cmd.<verb>, lumen.group.<g>.cmd.<verb>), sorted.
func FleetVerbs() []string { return verbsWhere(func(v Verb) bool { return v.Fleet }) }

// HouseVerbs are the everyday verbs a Pi may ask the house for, of any
// light (lumen.sys.house.<light>.cmd.<verb>), sorted.
func HouseVerbs() []string { return verbsWhere(func(v Verb) bool { return v.House }) }
