package past

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/actors/source/datasource"
	"github.com/lumen-home/lumen/internal/clip"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/nats/wire"
)

// Why explains event seq of light (0: its current state) by replaying
// its journal: the input, the rule that fired and what it read, the
// rules that did not and why, and one level further, the state before.
// It never writes. A refusal (unknown seq, nothing to explain) is a
// *wire.Error.
func Why(ctx context.Context, j Events, light string, seq uint64) (*messages.WhyReply, error) {
	explained, input, err := whyTarget(ctx, j, light, seq)
	if err != nil {
		return nil, err
	}
	w, prev, err := explain(ctx, j, light, input)
	if err != nil {
		return nil, err
	}
	w.Seq = explained
	if prev > 0 {
		p, _, err := explain(ctx, j, light, prev)
		if err != nil {
			return nil, err
		}
		p.Seq = prev
		w.Previous = p
	}
	return w, nil
}

// whyTarget finds the event to explain and its input: seq's, or the
// light's last state output's.
func whyTarget(ctx context.Context, j Events, light string, seq uint64) (explained, input uint64, err error) {
	var m *journal.Msg
	if seq == 0 {
		last, err := j.LastMsg(ctx, subject.Out(light, messages.OutState))
		if errors.Is(err, journal.ErrNotFound) {
			return 0, 0, &wire.Error{Code: 404, Msg: fmt.Sprintf("light %s has not entered a state since its journal starts; nothing to explain yet", light)}
		}
		if err != nil {
			return 0, 0, err
		}
		m = &last
	} else {
		if err := j.Replay(ctx, subject.Events(light), seq, seq, func(got journal.Msg) error {
			m = &got
			return nil
		}); err != nil {
			return 0, 0, err
		}
		if m == nil {
			first, _ := j.FirstSeq(ctx)
			return 0, 0, &wire.Error{Code: 404, Msg: fmt.Sprintf("sequence %d is no event of light %s (the journal keeps sequences from %d on; 'lumen tail --from-seq' shows them)", seq, light, first)}
		}
	}
	if _, dir, _, _ := subject.Parse(m.Subject); dir != subject.DirOut {
		return m.Seq, m.Seq, nil
	}
	cause, err := CauseOf(m.Data)
	if err != nil {
		return 0, 0, fmt.Errorf("light: event %d: %w", m.Seq, err)
	}
	if cause == 0 {
		return 0, 0, &wire.Error{Code: 404, Msg: fmt.Sprintf("event %d of light %s was caused by no input (a restart or a failure outside the rules); 'lumen tail --from-seq %d' shows it", m.Seq, light, m.Seq)}
	}
	return m.Seq, cause, nil
}

// provenance is the input that last set a variable, as far as the
// replay saw.
type provenance map[string]*messages.WhySetBy

// explain replays light up to input, tracing it, and returns its
// explanation and the last input before it that entered a state.
func explain(ctx context.Context, j Events, light string, input uint64) (*messages.WhyReply, uint64, error) {
	best, _, err := nearestSnapshot(ctx, j, light, input-1)
	if err != nil {
		return nil, 0, err
	}
	var w *messages.WhyReply
	var prev uint64
	for first := true; ; first = false {
		var snap []byte
		if best != nil {
			if snap, err = best.load(ctx, j); err != nil {
				return nil, 0, err
			}
		}
		w2, prev2, missing, err := explainFrom(ctx, j, light, input, snap)
		if err != nil {
			if first {
				return nil, 0, err
			}
			break // the journal no longer reaches further back
		}
		w, prev = w2, prev2
		if !missing || best == nil {
			break
		}
		// A variable read was set before this snapshot: from the one
		// before it, and at last from the start.
		if best, _, err = nearestSnapshot(ctx, j, light, best.Applied-1); err != nil {
			return nil, 0, err
		}
	}
	if prev == 0 {
		// The state before was entered before the replay's start: its
		// input is the cause of the last state output before this one.
		if prev, err = lastStateBefore(ctx, j, light, input); err != nil {
			return nil, 0, err
		}
	}
	return w, prev, nil
}

// explainFrom is one replay of explain, from snapshot snap (nil: from
// the start); missing says that a variable read has no known setter.
func explainFrom(ctx context.Context, j Events, light string, input uint64, snap []byte) (w *messages.WhyReply, prev uint64, missing bool, err error) {
	set := provenance{}
	var target *Applied
	var rules, layerRules []messages.Rule
	var notes []note
	asks := agentAsks{}
	_, err = Replay{Light: light, ToSeq: input, Trace: input, Snapshot: snap,
		OnEvent: func(m journal.Msg) {
			if n, ok := noteOf(m); ok {
				notes = append(notes, n)
			}
			asks.add(m)
		},
		OnApplied: func(ap *Applied) {
			if ap.Input.Seq == input {
				target = ap
				// A data input's rules read what it stored (its leading var
				// outputs: each variable and its _prev).
				var d messages.InDataData
				if ap.Input.Type == messages.InData && json.Unmarshal(ap.Input.Data, &d) == nil {
					for _, o := range ap.Result.Outputs {
						v, ok := o.Data.(messages.OutVarData)
						if _, stored := d.Vars[strings.TrimSuffix(v.Name, datasource.PrevSuffix)]; !ok || !stored {
							break
						}
						set[v.Name] = setBy(ap.Input)
					}
				}
				return
			}
			if ap.Input.Seq > input {
				return
			}
			for _, o := range ap.Result.Outputs {
				switch d := o.Data.(type) {
				case messages.OutVarData:
					set[d.Name] = setBy(ap.Input)
				case messages.OutStateData:
					prev = ap.Input.Seq
				}
			}
		},
		OnModel: func(ap *Applied, m *machine.Machine) {
			if ap.Input.Seq == input {
				// The rule that fired may be a layer's, and the layer
				// may have ended with the input: those before it too.
				rules = append(append(m.Model().Rules, m.LayerRules()...), layerRules...)
			}
			layerRules = m.LayerRules()
		},
	}.Run(ctx, j)
	if err != nil {
		return nil, 0, false, err
	}
	if target == nil {
		return nil, 0, false, &wire.Error{Code: 409, Msg: fmt.Sprintf("input %d of light %s is not applied yet; try again in a moment", input, light)}
	}
	w, missing = describeWhy(light, target, rules, set)
	w.Notes = notesSince(notes, w, prev)
	// What the person asked the agent, for a change it made.
	if n := asks.note(w.Input.By); n != "" {
		w.Notes = append([]string{n}, w.Notes...)
	}
	for _, r := range w.Reads {
		if r.SetBy != nil {
			if n := asks.note(r.SetBy.By); n != "" {
				w.Notes = append(w.Notes, r.Name+": "+n)
			}
		}
	}
	return w, prev, missing, nil
}

// setBy describes in as the setter of a variable.
func setBy(in Input) *messages.WhySetBy {
	s := &messages.WhySetBy{Seq: in.Seq, Time: in.Time, Type: in.Type, By: messages.WhoOf(in.By)}
	if in.Type == messages.InData {
		var d messages.InDataData
		if json.Unmarshal(in.Data, &d) == nil {
			s.Source = d.Source
		}
	}
	return s
}

// describeWhy builds the explanation of an applied, traced input.
func describeWhy(light string, ap *Applied, rules []messages.Rule, set provenance) (*messages.WhyReply, bool) {
	in := ap.Input
	w := &messages.WhyReply{Light: light, State: ap.Result.State, Reads: []messages.WhyRead{}, Skipped: []messages.WhySkip{},
		Input: messages.WhyInput{Seq: in.Seq, Time: in.Time, Type: in.Type, Data: json.RawMessage(in.Data), By: messages.WhoOf(in.By)}}
	missing := false
	reads := func(rs []machine.Read) []messages.WhyRead {
		out := make([]messages.WhyRead, 0, len(rs))
		for _, r := range rs {
			rd := messages.WhyRead{Name: r.Name, Value: r.Value, SetBy: set[r.Name]}
			if r.Value == nil {
				rd.Value, rd.Undefined = json.RawMessage("null"), true
			} else if rd.SetBy == nil {
				missing = true
			}
			out = append(out, rd)
		}
		return out
	}
	tr := ap.Trace
	if tr != nil {
		for _, t := range tr.Tried {
			if t.Outcome != machine.OutcomeFired {
				w.Skipped = append(w.Skipped, messages.WhySkip{ID: t.Rule, Why: t.Why, Reads: reads(t.Reads)})
				continue
			}
			for i := range rules {
				if rules[i].ID == t.Rule {
					w.Rule = &rules[i]
				}
			}
			w.Condition = &messages.WhyCondition{Text: t.Condition, Value: t.Value != nil && *t.Value}
			w.Reads = reads(t.Reads)
		}
		for _, t := range tr.Passed {
			w.Skipped = append(w.Skipped, messages.WhySkip{ID: t.Rule, Why: t.Why})
		}
	}
	w.Summary = summarize(ap, w)
	return w, missing
}

// summarize says in one sentence what the input did.
func summarize(ap *Applied, w *messages.WhyReply) string {
	in := ap.Input
	by := ""
	if in.By != "" {
		by = " by " + in.By
	}
	what := fmt.Sprintf("input %d (%s%s at %s)", in.Seq, in.Type, by, in.Time.Format("2006-01-02 15:04:05Z07:00"))
	var (
		ended   []string
		state   *messages.OutStateData
		ignored *messages.OutIgnoredData
	)
	for _, o := range ap.Result.Outputs {
		switch d := o.Data.(type) {
		case messages.OutLayerData:
			e := fmt.Sprintf("layer %s ended (%s)", d.Name, d.EndedBy)
			if d.Restored {
				e += " and returned the light to the state it began in"
			}
			ended = append(ended, e)
		case messages.OutStateData:
			if state == nil {
				state = &d
			}
		case messages.OutIgnoredData:
			if ignored == nil {
				ignored = &d
			}
		}
	}
	then := ""
	if len(ended) > 0 {
		then = "; then " + strings.Join(ended, ", ")
	}
	switch {
	case state != nil && w.Rule != nil:
		return fmt.Sprintf("%s fired %s: rule %s took the light from %s to %s%s", what, state.Transition, w.Rule.ID, state.From, state.To, then)
	case state != nil && len(ended) > 0 && state.Rule == nil:
		return fmt.Sprintf("%s: %s, from %s to %s", what, strings.Join(ended, ", "), state.From, ap.Result.State)
	case state != nil:
		return fmt.Sprintf("%s set the state from %s to %s%s", what, state.From, state.To, then)
	case ignored != nil:
		return fmt.Sprintf("%s changed nothing: %s%s", what, ignored.Reason, then)
	}
	if ap.Result.Err != nil {
		return fmt.Sprintf("%s was refused: %s", what, ap.Result.Err.Error)
	}
	if len(ended) > 0 {
		return fmt.Sprintf("%s: %s; the light stays in %s", what, strings.Join(ended, ", "), ap.Result.State)
	}
	return fmt.Sprintf("%s left the light in %s", what, ap.Result.State)
}

// note is an event no input caused (a restart, a failed data source):
// it explains an outcome when it falls between what was read and when.
type note struct {
	seq  uint64
	text string
}

func noteOf(m journal.Msg) (note, bool) {
	_, dir, typ, _ := subject.Parse(m.Subject)
	if dir != subject.DirOut || (typ != messages.OutError && typ != messages.OutRestart) {
		return note{}, false
	}
	var env messages.Envelope
	if messages.DecodeEnvelope(m.Data, &env) != nil || env.Cause != 0 {
		return note{}, false
	}
	at := env.Time.Format("2006-01-02 15:04:05Z07:00")
	if typ == messages.OutRestart {
		var d messages.OutRestartData
		if json.Unmarshal(env.Data, &d) != nil {
			return note{}, false
		}
		return note{m.Seq, fmt.Sprintf("%s: %s was restarted (%s)", at, d.Actor, d.Reason)}, true
	}
	var d messages.OutErrorData
	if json.Unmarshal(env.Data, &d) != nil {
		return note{}, false
	}
	return note{m.Seq, fmt.Sprintf("%s: %s error: %s", at, d.Kind, d.Error)}, true
}

// maxNotes bounds the notes of one explanation.
const maxNotes = 5

// notesSince keeps the notes after the earliest of what the explanation
// stands on (the inputs that set what was read, the previous state), the
// latest last.
func notesSince(notes []note, w *messages.WhyReply, prev uint64) []string {
	from := prev
	for _, r := range w.Reads {
		if r.SetBy != nil && (from == 0 || r.SetBy.Seq < from) {
			from = r.SetBy.Seq
		}
	}
	var out []string
	for _, n := range notes {
		if n.seq > from && n.seq < w.Input.Seq {
			out = append(out, n.text)
		}
	}
	if len(out) > maxNotes {
		out = append([]string{fmt.Sprintf("(%d earlier ones left out)", len(out)-maxNotes)}, out[len(out)-maxNotes:]...)
	}
	return out
}

// WhyText renders an explanation for a person, as lumen why prints it.
func WhyText(w *messages.WhyReply) string {
	var b strings.Builder
	writeWhy(&b, w, "")
	return b.String()
}

func writeWhy(b *strings.Builder, w *messages.WhyReply, indent string) {
	fmt.Fprintf(b, "%slight %s is %s: %s\n", indent, w.Light, w.State, w.Summary)
	if w.Rule != nil {
		r := w.Rule
		fmt.Fprintf(b, "%s  rule %s: %s --%s--> %s", indent, r.ID, r.From, r.On, r.To)
		if r.Priority != 0 {
			fmt.Fprintf(b, " (priority %d)", r.Priority)
		}
		b.WriteString("\n")
		if w.Condition != nil && w.Condition.Text != "" {
			fmt.Fprintf(b, "%s    when  %s  → %v\n", indent, w.Condition.Text, w.Condition.Value)
		}
		if r.Action != "" {
			fmt.Fprintf(b, "%s    do    %s\n", indent, r.Action)
		}
	}
	for _, r := range w.Reads {
		if r.Undefined {
			fmt.Fprintf(b, "%s    read  %s: undefined (never set)\n", indent, r.Name)
			continue
		}
		fmt.Fprintf(b, "%s    read  %s = %s%s\n", indent, r.Name, r.Value, setByText(r.SetBy))
	}
	for _, s := range w.Skipped {
		fmt.Fprintf(b, "%s  not %s: %s", indent, s.ID, s.Why)
		for i, r := range s.Reads {
			sep := "; read "
			if i > 0 {
				sep = ", "
			}
			fmt.Fprintf(b, "%s%s = %s", sep, r.Name, r.Value)
		}
		b.WriteString("\n")
	}
	for _, n := range w.Notes {
		fmt.Fprintf(b, "%s  note: %s\n", indent, n)
	}
	if w.Previous != nil {
		fmt.Fprintf(b, "%sbefore that:\n", indent)
		writeWhy(b, w.Previous, indent+"  ")
	}
}

func setByText(s *messages.WhySetBy) string {
	if s == nil {
		return " (not set since the journal's start)"
	}
	src := ""
	if s.Source != "" && !strings.HasPrefix(s.By, messages.WhoSource+":") {
		src = " from source " + s.Source
	}
	return fmt.Sprintf(" (set by input %d, %s%s by %s, %s)", s.Seq, s.Type, src, s.By, s.Time.Format("2006-01-02 15:04:05Z07:00"))
}

// agentAsks are the requests people made to the light's agent, by
// session, in step order: an input by agent:<session>:<step> was made
// for the last one before its step.
type agentAsks map[string][]messages.OutAgentData

func (a agentAsks) add(m journal.Msg) {
	if _, dir, typ, _ := subject.Parse(m.Subject); dir != subject.DirOut || typ != messages.OutAgent {
		return
	}
	var env messages.Envelope
	var d messages.OutAgentData
	if messages.DecodeEnvelope(m.Data, &env) != nil || json.Unmarshal(env.Data, &d) != nil || d.Kind != messages.AgentKindAsk {
		return
	}
	a[d.Session] = append(a[d.Session], d)
}

// note says what was asked of the agent for a change by who, "" when who
// is no agent step or the request is not in the journal read.
func (a agentAsks) note(who string) string {
	rest, ok := strings.CutPrefix(who, messages.WhoAgent+":")
	if !ok {
		return ""
	}
	i := strings.LastIndexByte(rest, ':')
	if i < 0 {
		return ""
	}
	session, step := rest[:i], rest[i+1:]
	n, err := strconv.Atoi(step)
	if err != nil {
		return ""
	}
	var ask *messages.OutAgentData
	for i := range a[session] {
		if a[session][i].Step <= n {
			ask = &a[session][i]
		}
	}
	if ask == nil {
		return ""
	}
	by := ""
	if ask.Who != "" {
		by = " by " + ask.Who
	}
	return fmt.Sprintf("agent session %s step %d, asked%s: %q", session, n, by, clip.To(ask.Text, 200, "…"))
}

// lastStateBefore is the input of the light's last state output caused
// by an input before input (0: none in the journal).
func lastStateBefore(ctx context.Context, j Events, light string, input uint64) (uint64, error) {
	var prev uint64
	err := j.Replay(ctx, subject.Out(light, messages.OutState), 0, input, func(m journal.Msg) error {
		if cause, err := CauseOf(m.Data); err == nil && cause < input && cause > prev {
			prev = cause
		}
		return nil
	})
	return prev, err
}
