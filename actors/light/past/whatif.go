package past

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/internal/clip"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/nats/wire"
)

// MaxDifferences bounds the differences a what-if lists (it counts all).
const MaxDifferences = 20

// whatIfInputs are the recorded inputs a what-if replays: what people,
// the button and data sources did. Configuration is the proposal's;
// timers and schedules are the proposal's, fired in virtual time.
var whatIfInputs = map[string]bool{messages.InFired: true, messages.InData: true, messages.InVar: true, messages.InState: true,
	messages.InPower: true, messages.InBrightness: true, messages.InColor: true}

// WhatIf replays light's recorded inputs from input from on against the
// proposed configuration config (an InConfigData of op apply, checked as
// apply checks it), starting from the light's recorded state and
// variables right before from, with no side effects. It reports the
// inputs after which the light would be in another state than it was.
func WhatIf(ctx context.Context, j Events, light string, config []byte, from uint64) (*messages.WhatIfReply, error) {
	var m *machine.Machine
	if from > 1 {
		sum, err := Rebuild(ctx, j, light, from-1)
		if err != nil {
			return nil, err
		}
		m = sum.Machine
	} else {
		m = machine.New(machine.WithEvalTimeout(ReplayEvalTimeout))
	}
	defer m.Close()
	start := m.State()
	var cfg messages.InConfigData
	if err := json.Unmarshal(config, &cfg); err != nil {
		return nil, fmt.Errorf("light: whatif: %w", err)
	}
	// The recorded variables and state stay: only the rules change.
	cfg.Op, cfg.Vars, cfg.VarsOp, cfg.Initial, cfg.State = messages.OpApply, nil, messages.VarsKeep, "", ""
	body, _ := json.Marshal(cfg)
	// Applied at the window's first input, so that schedules count from
	// then.
	applied := false
	propose := func(seq uint64, t time.Time) error {
		if applied {
			return nil
		}
		applied = true
		if res := m.Apply(machine.Event{Seq: seq, Time: t}, messages.InConfig, body); res.Err != nil {
			return &wire.Error{Code: 400, Msg: "the proposed configuration is not accepted: " + res.Err.Error}
		}
		return nil
	}

	w := &messages.WhatIfReply{Light: light, FromSeq: from, Differences: []messages.Difference{}}
	// The light journals the outputs of its inputs in input order: once
	// an output of input c is read, every input before c has all its
	// outputs read, and its recorded state is known. Inputs wait in
	// pending until then.
	type step struct {
		in       Input
		proposed string
	}
	var pending []step
	rec := start
	settle := func(before uint64) {
		n := 0
		for ; n < len(pending) && pending[n].in.Seq < before; n++ {
			s := pending[n]
			w.Replayed++
			if rec == s.proposed {
				continue
			}
			w.Differ++
			if len(w.Differences) < MaxDifferences {
				w.Differences = append(w.Differences, messages.Difference{Seq: s.in.Seq, Time: s.in.Time, Input: inputLine(s.in), Recorded: rec, Proposed: s.proposed})
			}
		}
		pending = pending[n:]
	}
	err := j.Replay(ctx, subject.Events(light), max(from, 1), 0, func(msg journal.Msg) error {
		_, dir, typ, _ := subject.Parse(msg.Subject)
		if dir == subject.DirOut {
			var env messages.Envelope
			if messages.DecodeEnvelope(msg.Data, &env) != nil || env.Cause < from || env.Cause == 0 {
				return nil
			}
			settle(env.Cause)
			var d messages.OutStateData
			if typ == messages.OutState && json.Unmarshal(env.Data, &d) == nil {
				rec = d.To // whatever input entered it, a timer's too
			}
			return nil
		}
		if !whatIfInputs[typ] {
			return nil
		}
		in := DecodeInput(light, Record{Seq: msg.Seq, Subject: msg.Subject, Data: msg.Data, Time: msg.Time})
		if in.Reject != "" {
			return nil
		}
		if err := propose(in.Seq, in.Time); err != nil {
			return err
		}
		fireDue(m, in.Seq, in.Time)
		m.Apply(machine.Event{Seq: in.Seq, Time: in.Time}, in.Type, in.Data)
		pending = append(pending, step{in: in, proposed: m.State()})
		return nil
	})
	if err == nil {
		err = propose(from, time.Now())
	}
	if err != nil {
		return nil, err
	}
	settle(math.MaxUint64)
	return w, nil
}

// fireDue fires, in deadline order, the proposal's timers, schedule
// ticks and layer deadlines due by t, as the light would have between two inputs. Their
// random() is seeded from the next input's sequence.
func fireDue(m *machine.Machine, seq uint64, t time.Time) {
	for range 10000 { // a timer that restarts itself at 0 ms cannot stall the replay
		d, ok := m.NextDue(t)
		if !ok {
			return
		}
		m.Apply(machine.Event{Seq: seq, Time: d.At}, d.Kind, d.Data(false))
	}
}

// inputLine is an input in a line: type, data, who.
func inputLine(in Input) string {
	return fmt.Sprintf("%s %s by %s", in.Type, clip.To(string(in.Data), 120, "…"), messages.WhoOf(in.By))
}

// WhatIfText renders a what-if for a person, as lumen whatif prints it.
func WhatIfText(w *messages.WhatIfReply) string {
	out := fmt.Sprintf("replayed %d inputs of light %s from sequence %d: %d would leave it in another state\n", w.Replayed, w.Light, w.FromSeq, w.Differ)
	for _, d := range w.Differences {
		out += fmt.Sprintf("  %s  input %d  %s\n      recorded %s → proposed %s\n", d.Time.Local().Format("2006-01-02 15:04:05"), d.Seq, d.Input, d.Recorded, d.Proposed)
	}
	if more := w.Differ - len(w.Differences); more > 0 {
		out += fmt.Sprintf("  … and %d more (--json lists the first %d)\n", more, MaxDifferences)
	}
	return out
}
