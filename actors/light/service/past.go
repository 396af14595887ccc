package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/lumen-home/lumen/actors/light"

	"github.com/nats-io/nats.go/micro"

	"github.com/lumen-home/lumen/actors"
	"github.com/lumen-home/lumen/actors/light/past"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/nats/wire"
)

// The light as it was: get {"seq":N} or {"at":TIME} replays the journal
// up to that input, with no side effects and without the light's actor,
// which goes on serving the present.

// WithJournal lets get answer for the past, from j; without it such a
// get is refused.
func WithJournal(j *journal.Journal) ServeOption {
	return func(h *handler) { h.journal = j }
}

// pastTimeout bounds one replay of the past.
const pastTimeout = 2 * time.Minute

// past answers a look into the past (get at a seq or time, history,
// rollback): it replays the journal, so it runs off the endpoint's
// goroutine, and the present (get, fleet get) is not held up.
func (h *handler) past(req micro.Request, verb string, msg any) {
	if h.journal == nil {
		wire.RespondError(req, 409, verb+": this light cannot read its journal here")
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), pastTimeout)
		defer cancel()
		switch q := msg.(type) {
		case *GetAt:
			h.getAt(ctx, req, q)
		case *HistoryReq:
			h.history(ctx, req)
		case *Rollback:
			h.rollback(ctx, req, q)
		case *WhatIfReq:
			h.whatIf(ctx, req, q)
		case *WhyReq:
			w, err := past.Why(ctx, h.journal, h.light, q.Seq)
			if err != nil {
				respondPast(req, "why", "", err)
				return
			}
			w.OK = true
			wire.Respond(req, w)
		}
	}()
}

func (h *handler) getAt(ctx context.Context, req micro.Request, q *GetAt) {
	to, err := h.pastInput(ctx, q)
	if err != nil {
		respondPast(req, "get", "", err)
		return
	}
	sum, err := past.Rebuild(ctx, h.journal, h.light, to)
	if err != nil {
		respondPast(req, "get", fmt.Sprintf("the light as it was at input %d cannot be rebuilt", to), err)
		return
	}
	wire.Respond(req, sum.Model)
}

// pastInput is the input the light is to be rebuilt up to: q.Seq's (an
// output names its cause), or the last one stored at or before q.At.
func (h *handler) pastInput(ctx context.Context, q *GetAt) (uint64, error) {
	events := subject.Events(h.light)
	first, err := past.FirstEvent(ctx, h.journal, h.light)
	if err != nil {
		return 0, err
	}
	if q.At != nil {
		switch {
		case q.At.After(h.clock.Now()):
			return 0, &wire.Error{Code: 400, Msg: fmt.Sprintf("%s is in the future", q.At.Format(time.RFC3339))}
		case q.At.Before(first.Time):
			return 0, &wire.Error{Code: 404, Msg: fmt.Sprintf("the journal of light %s starts at %s (sequence %d); ask for a time after it",
				h.light, first.Time.UTC().Format(time.RFC3339), first.Seq)}
		}
		next, err := h.journal.SeqAt(ctx, subject.AllIn(h.light), q.At.Add(time.Nanosecond))
		if err != nil {
			return 0, err
		}
		if next == 0 { // a copy's journal, in no one order: not for times
			return 0, &wire.Error{Code: 409, Msg: "this journal cannot be read by time; ask for a seq"}
		}
		return next - 1, nil
	}
	var m *journal.Msg
	if err := h.journal.Replay(ctx, events, q.Seq, q.Seq, func(got journal.Msg) error {
		m = &got
		return nil
	}); err != nil {
		return 0, err
	}
	if m == nil {
		floor := first.Seq
		if q.Seq < floor {
			floor = h.pastFloor(ctx, floor) // (which asks only from first on)
		}
		return 0, &wire.Error{Code: 404, Msg: fmt.Sprintf("sequence %d is no event of light %s (its journal starts at %d; 'lumen tail --from-seq' shows them)", q.Seq, h.light, floor)}
	}
	if _, dir, _, _ := subject.Parse(m.Subject); dir == subject.DirOut {
		if cause, err := past.CauseOf(m.Data); err == nil && cause > 0 {
			return cause, nil
		}
	}
	return q.Seq, nil
}

// pastFloor is the first event from which the light's past can be
// rebuilt: the journal's first, unless compaction removed what came
// before it and the past snapshots that reached back there. Then the
// first few events may be outputs of an input no snapshot covers: the
// floor is the first kept event whose input can be rebuilt.
func (h *handler) pastFloor(ctx context.Context, first uint64) uint64 {
	const probe = 16 // an input's outputs come right after it
	for seq := first; seq < first+probe; seq++ {
		to, err := h.pastInput(ctx, &GetAt{Seq: seq})
		if err != nil {
			continue
		}
		if _, err := past.Rebuild(ctx, h.journal, h.light, to); err == nil {
			return seq
		}
	}
	return first
}

func (h *handler) history(ctx context.Context, req micro.Request) {
	changes, err := past.History(ctx, h.journal, h.light)
	if err != nil {
		wire.RespondError(req, 409, fmt.Sprintf("history: the journal cannot be read back: %v", err))
		return
	}
	wire.Respond(req, messages.HistoryReply{OK: true, Light: h.light, Changes: changes})
}

// rollback applies the configuration the light had right after input
// q.Seq, as a new input like apply (so a rollback is itself in the
// history, and can be rolled back); its variables stay as they are.
func (h *handler) rollback(ctx context.Context, req micro.Request, q *Rollback) {
	to, err := h.pastInput(ctx, &GetAt{Seq: q.Seq})
	if err != nil {
		respondPast(req, "rollback", "", err)
		return
	}
	sum, err := past.Rebuild(ctx, h.journal, h.light, to)
	if err != nil {
		respondPast(req, "rollback", fmt.Sprintf("the configuration after input %d cannot be rebuilt", to), err)
		return
	}
	if sum.Pending > 0 {
		wire.RespondError(req, 409, fmt.Sprintf("rollback: input %d is not applied yet; try again in a moment", to))
		return
	}
	cfg := past.ConfigOf(sum.Machine)
	cfg.ConfirmEmpty = true // it was the light's configuration then, empty or not
	body, err := json.Marshal(cfg)
	if err != nil {
		wire.RespondError(req, 500, "rollback: "+err.Error())
		return
	}
	msg, err := translateWith(messages.VerbApply, body, h.checks())
	if err != nil {
		wire.RespondError(req, 409, fmt.Sprintf("rollback: the configuration after input %d is not accepted now: %v", to, err))
		return
	}
	if c, ok := msg.(*light.Command); ok {
		var d messages.InConfigData
		if err := json.Unmarshal(c.Data, &d); err == nil {
			d.RollbackTo = to
			c.Data, _ = json.Marshal(d)
		}
		// By rollback, and who asked for it (rollback:cli, rollback:http).
		c.By = messages.Who(messages.WhoRollback, whoAsks(req))
	}
	actors.Answer(req, h.root, h.pid, msg, h.timeout, messages.VerbRollback, "the light", nil)
}

// respondPast answers a failed look into the past: a refusal with its
// code, a replay that cannot be made with 409, anything else with 500.
func respondPast(req micro.Request, verb, what string, err error) {
	var e *wire.Error
	var mi *past.MissingInputError
	switch {
	case errors.As(err, &e):
		wire.RespondError(req, e.Code, verb+": "+e.Msg)
	case errors.As(err, &mi) && what == "":
		wire.RespondError(req, 409, fmt.Sprintf("%s: the journal no longer holds what this needs (%v)", verb, mi))
	case errors.As(err, &mi):
		wire.RespondError(req, 409, fmt.Sprintf("%s: %s: %v", verb, what, err))
	case what != "":
		wire.RespondError(req, 500, fmt.Sprintf("%s: %s: %v", verb, what, err))
	default:
		wire.RespondError(req, 500, verb+": "+err.Error())
	}
}

func (h *handler) whatIf(ctx context.Context, req micro.Request, q *WhatIfReq) {
	from := q.FromSeq
	if from != 0 {
		to, err := h.pastInput(ctx, &GetAt{Seq: from})
		if err != nil {
			respondPast(req, "whatif", "", err)
			return
		}
		from = to
	} else {
		at := h.clock.Now().Add(-q.Since)
		next, err := h.journal.SeqAt(ctx, subject.AllIn(h.light), at)
		if err != nil {
			respondPast(req, "whatif", "", err)
			return
		}
		if next == 0 {
			wire.RespondError(req, 409, "whatif: this journal cannot be read by time; give from_seq")
			return
		}
		from = next
	}
	w, err := past.WhatIf(ctx, h.journal, h.light, q.Config, from)
	if err != nil {
		respondPast(req, "whatif", "", err)
		return
	}
	w.OK = true
	wire.Respond(req, w)
}
