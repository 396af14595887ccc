// Package describe puts events, definitions and replies into words for a
// person: one line per event as lumen tail prints it, an agent's steps,
// a data source, the tools, the agent's sessions. The CLI prints them;
// anything else that shows the light to a person says it the same way.
package describe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lumen-home/lumen/actors/source/datasource"
	"github.com/lumen-home/lumen/internal/clip"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/subject"
)

// Events describes a light's events one after another, as they come:
// what an input's earlier outputs said is kept for its later ones (after
// a rule that failed, "no rule matches" means no other rule did). The
// zero value is ready to use.
type Events struct {
	failed uint64 // the input whose rule failed last
}

// Event renders one event of the journal for a person, as lumen tail
// prints it: time, light, direction, then what it says.
func (e *Events) Event(subj string, data []byte) string {
	light, dir, typ, _ := subject.Parse(subj)
	var env messages.Envelope
	if err := messages.DecodeEnvelope(data, &env); err != nil || env.V == 0 {
		return fmt.Sprintf("%s %-3s %-8s %s", light, dir, typ, bytes.TrimSpace(data))
	}
	env.Type = typ
	ts := env.Time.Local().Format("15:04:05.000")
	if dir == "in" {
		by := ""
		if env.By != "" {
			by = " by " + env.By
		}
		return fmt.Sprintf("%s %s in  %-8s %s%s", ts, light, typ, Input(env), by)
	}
	return fmt.Sprintf("%s %s out %s", ts, light, e.Output(env))
}

// Output renders an output event in one line.
func (e *Events) Output(env messages.Envelope) string {
	cause := ""
	if env.Cause != 0 {
		cause = fmt.Sprintf(" (input %d)", env.Cause)
	}
	if s, ok := controlOutput(env, cause); ok {
		return s
	}
	switch env.Type {
	case messages.OutState:
		var d messages.OutStateData
		if json.Unmarshal(env.Data, &d) == nil {
			via := "set"
			switch {
			case d.Rule != nil:
				via = fmt.Sprintf("%s by rule %s", d.Transition, *d.Rule)
			case d.Transition != "":
				via = d.Transition + ", a layer ended"
			}
			return fmt.Sprintf("state  %s → %s  [%s]%s%s%s", d.From, d.To, via, colorSet(d.Color), fading(d.FadeMs), cause)
		}
	case messages.OutVar:
		var d messages.OutVarData
		if json.Unmarshal(env.Data, &d) == nil {
			if d.Unset {
				return fmt.Sprintf("var    %s unset%s", d.Name, cause)
			}
			return fmt.Sprintf("var    %s = %s%s", d.Name, Value(d.Value), cause)
		}
	case messages.OutGap:
		var d messages.OutGapData
		if json.Unmarshal(env.Data, &d) == nil {
			return fmt.Sprintf("gap    the house will never have events %d to %d: %s", d.From, d.To, d.Reason)
		}
	case messages.OutUpgrade:
		var d messages.OutUpgradeData
		if json.Unmarshal(env.Data, &d) == nil {
			return fmt.Sprintf("upgrade the inputs from here are checked at level %d (was %d): limits on names, sizes and schedules%s", d.To, d.From, cause)
		}
	case messages.OutError:
		var d messages.OutErrorData
		if json.Unmarshal(env.Data, &d) == nil && d.Rule != "" {
			// One line per failed rule: its id once, what it did, and that
			// the light went on to the next matching rule.
			e.failed = env.Cause
			what := strings.TrimLeft(strings.TrimPrefix(d.Error, "rule "+d.Rule), ": ")
			return fmt.Sprintf("error  %s in rule %s: %s; the next matching rule was tried%s", d.Kind, d.Rule, what, cause)
		}
		if json.Unmarshal(env.Data, &d) == nil {
			return fmt.Sprintf("error  %s %s%s", d.Kind, d.Error, cause)
		}
	case messages.OutAgent:
		var d messages.OutAgentData
		if json.Unmarshal(env.Data, &d) == nil {
			return "agent  " + Agent(d)
		}
	case messages.OutIntent:
		var d messages.OutIntentData
		if json.Unmarshal(env.Data, &d) == nil {
			switch {
			case d.Reason != "":
				return fmt.Sprintf("intent %q (%s %s) dropped: %s%s", d.Phrase, d.Verb, d.Arg, d.Reason, cause)
			case d.Delete:
				return fmt.Sprintf("intent %q (%s %s) forgotten%s", d.Phrase, d.Verb, d.Arg, cause)
			}
			return fmt.Sprintf("intent %q → %s %s learned%s", d.Phrase, d.Verb, d.Arg, cause)
		}
	case messages.OutLayer:
		var d messages.OutLayerData
		if json.Unmarshal(env.Data, &d) == nil {
			how := map[string]string{messages.LayerEndFires: "its rules fired as often as it said", messages.LayerEndMs: "its time was up",
				messages.LayerEndUntil: "its until condition held", messages.LayerEndDelete: "it was deleted"}[d.EndedBy]
			if how == "" {
				how = d.EndedBy
			}
			if d.Late {
				how += " (late: the daemon was down)"
			}
			back := ", the light stays where it is"
			if d.Restored {
				back = ", back to the state it began in"
			}
			return fmt.Sprintf("layer  %s ended: %s%s%s", d.Name, how, back, cause)
		}
	case messages.OutTimer:
		var d messages.OutTimerData
		if json.Unmarshal(env.Data, &d) == nil {
			what := map[string]string{messages.TimerSet: "set for " + clock(d.Deadline), messages.TimerCancel: "cancelled",
				messages.TimerFire: "fired"}[d.Op]
			return fmt.Sprintf("timer  %s %s%s%s", d.Name, cmp(what, d.Op), late(d.Late), cause)
		}
	case messages.OutSchedule:
		var d messages.OutScheduleData
		if json.Unmarshal(env.Data, &d) == nil {
			what := map[string]string{"set": "set", "delete": "deleted", "fire": "ticked"}[d.Op]
			next := ""
			if d.Next != nil {
				next = ", next at " + clock(*d.Next)
			}
			return fmt.Sprintf("schedule %s %s%s%s%s", Schedule(d.Schedule), cmp(what, d.Op), late(d.Late), next, cause)
		}
	case messages.OutConfig:
		var d messages.OutConfigData
		if json.Unmarshal(env.Data, &d) == nil {
			return fmt.Sprintf("config %s%s", configDone(d), cause)
		}
	case messages.OutRestart:
		var d messages.OutRestartData
		if json.Unmarshal(env.Data, &d) == nil {
			return fmt.Sprintf("restart %s was restarted (restart %d): %s", d.Actor, d.Restarts, clip.Line(d.Reason, 200, "…"))
		}
	case messages.OutIgnored:
		var d messages.OutIgnoredData
		if json.Unmarshal(env.Data, &d) == nil {
			reason := d.Reason
			if env.Cause != 0 && env.Cause == e.failed {
				reason = strings.Replace(reason, "no rule matches", "no other rule matches", 1)
			}
			return fmt.Sprintf("ignored %s%s", reason, cause)
		}
	}
	return fmt.Sprintf("%-6s %s%s", env.Type, Value(env.Data), cause)
}

// configDone says what a configuration change did, by name.
func configDone(d messages.OutConfigData) string {
	var parts []string
	for _, l := range []struct {
		kind string
		list []string
	}{{"state", d.States}, {"rule", d.Rules}, {"schedule", d.Schedules}, {"tool", d.Tools}, {"source", d.Sources},
		{"function", d.Functions}, {"layer", d.Layers}} {
		if len(l.list) > 0 {
			parts = append(parts, names(l.kind, l.list))
		}
	}
	what := strings.ReplaceAll(d.Op, "_", " ")
	if len(parts) == 0 {
		return what
	}
	return what + ": " + strings.Join(parts, "; ")
}

// AgentStep renders an agent event of session as lumen ask shows it while
// the request runs, or "" for events it does not show.
func AgentStep(data []byte, session string) string {
	var env messages.Envelope
	if messages.DecodeEnvelope(data, &env) != nil {
		return ""
	}
	var d messages.OutAgentData
	if json.Unmarshal(env.Data, &d) != nil || d.Session != session {
		return ""
	}
	switch d.Kind {
	case messages.AgentKindTool:
		if d.Call == nil || d.Call.Tool == "done" || d.Call.Tool == "askUser" {
			return ""
		}
		return "  " + Call(*d.Call)
	case messages.AgentKindApproval:
		if d.Call == nil {
			return ""
		}
		return fmt.Sprintf("  ? %s %s needs your approval%s: lumen approve %s  (or lumen reject %s; on the light: hold approves, click rejects)",
			d.Call.Tool, Value(d.Call.Args), because(d.Text), d.Approval, d.Approval)
	case messages.AgentKindDecision:
		return fmt.Sprintf("    %s by %s", d.Status, d.Who)
	}
	return ""
}

// Agent renders any agent event in one line, for tail.
func Agent(d messages.OutAgentData) string {
	head := fmt.Sprintf("%s#%d %s", d.Session, d.Step, d.Kind)
	switch d.Kind {
	case messages.AgentKindAsk:
		return fmt.Sprintf("%s by %s: %s", head, d.Who, clip.Line(d.Text, 200, "…"))
	case messages.AgentKindModel:
		if d.Message == nil {
			return head
		}
		var calls []string
		for _, tc := range d.Message.ToolCalls {
			calls = append(calls, tc.Name)
		}
		if len(calls) > 0 {
			return fmt.Sprintf("%s calls %s", head, strings.Join(calls, ", "))
		}
		return fmt.Sprintf("%s says %s", head, clip.Line(d.Message.Content, 200, "…"))
	case messages.AgentKindCall, messages.AgentKindTool:
		if d.Call != nil {
			return fmt.Sprintf("%s [%s] %s", head, d.Call.Tier, Call(*d.Call))
		}
	case messages.AgentKindApproval:
		if d.Call != nil {
			return fmt.Sprintf("%s %s waits for approval %s%s", head, d.Call.Tool, d.Approval, because(d.Text))
		}
	case messages.AgentKindDecision:
		return fmt.Sprintf("%s %s %s by %s", head, d.Approval, d.Status, d.Who)
	case messages.AgentKindEnd:
		return fmt.Sprintf("%s %s: %s", head, d.Status, clip.Line(d.Text, 200, "…"))
	}
	return head
}

// because is what an approval event says of why the call needs one
// (text: "replaces the existing state \"red\""), as " (it …)", or "".
func because(text string) string {
	if text == "" {
		return ""
	}
	return " (it " + clip.Line(text, 200, "…") + ")"
}

// Call renders one tool call of the agent.
func Call(c messages.ToolStep) string {
	args := Value(c.Args)
	if c.OK {
		return fmt.Sprintf("✓ %s %s", c.Tool, args)
	}
	return fmt.Sprintf("✗ %s %s: %s", c.Tool, args, clip.Line(c.Error, 240, "…"))
}

// Source renders one definition of a data source of list_sources' reply
// r for a person: name, kind and what triggers it (a webhook's URL), what
// it stores, what it fires, and when it last stored a run (a custom
// transition records none).
func Source(raw json.RawMessage, r messages.SourcesReply, now time.Time) string {
	var d datasource.Def
	if err := d.UnmarshalJSON(raw); err != nil {
		return string(raw)
	}
	var what string
	switch d.Kind() {
	case datasource.TypePoll:
		what = fmt.Sprintf("poll every %v: %s %s", d.Interval(), d.Fetch.Tool, d.Fetch.Args)
	case datasource.TypeInternal:
		what = fmt.Sprintf("internal every %v: %s", d.Interval(), d.Tracks)
	case datasource.TypeNATS:
		what = "nats " + d.Subject
	case datasource.TypeMQTT:
		what = "mqtt " + d.Topic
	case datasource.TypeWebhook:
		what = "webhook POST " + r.WebhookURLs[d.Name]
		if r.WebhookURLs[d.Name] == "" {
			what = "webhook (the daemon serves no HTTP, --http off or its port taken: nothing receives it)"
		}
	case datasource.TypeTransition:
		what = fmt.Sprintf("custom transition, predicate %s every %v", d.Fetch.Tool, d.Interval())
	case datasource.TypeGPIO:
		what = fmt.Sprintf("gpio BCM %d %s, pull %s, debounce %v", *d.Pin, d.Edge, d.Pull, d.Debounce())
	default:
		what = d.Kind()
	}
	parts := []string{fmt.Sprintf("%-16s %s", d.Name, what)}
	if len(d.Store) > 0 {
		var st []string
		for _, v := range slices.Sorted(maps.Keys(d.Store)) {
			st = append(st, v+"="+d.Store[v])
		}
		parts = append(parts, "store "+strings.Join(st, " "))
	}
	if d.Fires != "" {
		parts = append(parts, "fires "+d.Fires)
	}
	if at, ok := r.LastRuns[d.Name]; ok {
		parts = append(parts, "last run "+now.Sub(at).Round(time.Second).String()+" ago")
	}
	return strings.Join(parts, "  ")
}

// Tools writes list_tools' reply, one tool a line: the defined tools
// (a plugin of the same name runs instead), the operator's plugins with
// their status, then the built-ins.
func Tools(w io.Writer, lightName string, r messages.ToolsReply) {
	plugin := map[string]bool{}
	for _, p := range r.Plugins {
		plugin[p.Name] = true
	}
	if len(r.Tools)+len(r.Plugins)+len(r.Builtin) == 0 {
		fmt.Fprintf(w, "light %s has no tools\n", lightName)
	}
	for _, t := range r.Tools {
		note := ""
		if plugin[t.Name] {
			note = "  [the plugin " + t.Name + " runs instead]"
		}
		hosts := "none"
		if len(t.Hosts) > 0 {
			hosts = strings.Join(t.Hosts, ", ")
		}
		fmt.Fprintf(w, "%-20s %s  (hosts: %s)%s\n", t.Name, t.Description, hosts, note)
	}
	for _, p := range r.Plugins {
		status := p.Status
		if p.Error != "" {
			status += ": " + p.Error
		}
		fmt.Fprintf(w, "%-20s plugin, %s\n", p.Name, status)
	}
	for _, b := range r.Builtin {
		fmt.Fprintf(w, "%-20s built-in: %s\n", b.Name, b.Description)
	}
}

// Sessions writes the agent's sessions as a table, latest first.
func Sessions(w io.Writer, list []messages.SessionInfo) error {
	if len(list) == 0 {
		_, err := fmt.Fprintln(w, "no sessions yet; start one with: lumen ask \"…\"")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tSTATUS\tSTEPS\tUPDATED\tLAST ASK\tPENDING")
	for _, s := range list {
		pending := ""
		if s.Pending != nil {
			pending = s.Pending.Tool + " (lumen approve " + s.Pending.Approval + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", s.Session, s.Status, s.Steps, s.Updated, clip.Line(s.LastAsk, 50, "…"), pending)
	}
	return tw.Flush()
}

// Transcript writes one session's conversation: what was asked, what the
// agent said and called, and what waits.
func Transcript(w io.Writer, s messages.SessionInfo) {
	fmt.Fprintf(w, "session %s: %s, %d steps, updated %s\n", s.Session, s.Status, s.Steps, s.Updated)
	results := map[string]messages.ToolStep{}
	for _, c := range s.Calls {
		results[c.ID] = c
	}
	for _, m := range s.Transcript {
		switch m.Role {
		case "user":
			fmt.Fprintf(w, "you:   %s\n", m.Content)
		case "assistant":
			if m.Content != "" {
				fmt.Fprintf(w, "agent: %s\n", m.Content)
			}
			for _, tc := range m.ToolCalls {
				fmt.Fprintf(w, "  → %s %s\n", tc.Name, Value(json.RawMessage(tc.Args)))
			}
		case "tool":
			if c, ok := results[m.ToolCallID]; ok {
				fmt.Fprintf(w, "    %s\n", Call(c))
			} else {
				fmt.Fprintf(w, "    %s\n", clip.Line(m.Content, 160, "…"))
			}
		}
	}
	if s.LastAnswer != "" {
		fmt.Fprintf(w, "answer: %s\n", s.LastAnswer)
	}
	if s.Pending != nil {
		fmt.Fprintf(w, "waiting: %s needs approval: lumen approve %s\n", s.Pending.Tool, s.Pending.Approval)
	}
}
