package past

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/nats/wire"
)

// FirstEvent is the light's first event in the journal.
func FirstEvent(ctx context.Context, j Events, light string) (journal.Msg, error) {
	var first *journal.Msg
	errStop := errors.New("stop")
	err := j.Replay(ctx, subject.Events(light), 0, 0, func(m journal.Msg) error {
		first = &m
		return errStop
	})
	if err != nil && !errors.Is(err, errStop) {
		return journal.Msg{}, err
	}
	if first == nil {
		return journal.Msg{}, &wire.Error{Code: 404, Msg: fmt.Sprintf("light %s has no events in the journal yet", light)}
	}
	return *first, nil
}

// History is every change of the light's configuration, oldest first:
// each input after which its configuration (states, rules, schedules,
// tools, sources, functions, layers, initial, on_state; the state color
// set_color makes and recolors) differs from before, and
// how: a layer that ends by itself shows as removed by the input that
// ended it.
func History(ctx context.Context, j Events, light string) ([]messages.ConfigChange, error) {
	out, err := history(ctx, j, light, nil)
	if mi := (*MissingInputError)(nil); errors.As(err, &mi) {
		// Compacted: the changes after the oldest snapshot kept.
		snaps, perr := Snapshots(ctx, j, light)
		if perr != nil || len(snaps) == 0 {
			return nil, err
		}
		b, lerr := snaps[0].load(ctx, j)
		if lerr != nil {
			return nil, err
		}
		return history(ctx, j, light, b)
	}
	return out, err
}

// history lists the changes of a replay from snapshot snap (nil: from
// the start).
func history(ctx context.Context, j Events, light string, snap []byte) ([]messages.ConfigChange, error) {
	var out []messages.ConfigChange
	m := machine.New()
	if snap != nil {
		f, err := FoldFrom(light, snap, ReplayEvalTimeout)
		if err != nil {
			return nil, err
		}
		m = f.M
	}
	prev := ConfigOf(m)
	m.Close()
	_, err := Replay{Light: light, Snapshot: snap, OnModel: func(ap *Applied, m *machine.Machine) {
		// set_color makes and recolors the state color: configuration.
		if ap.Input.Type != messages.InConfig && ap.Input.Type != messages.InColor && !endsLayer(ap.Result) {
			return
		}
		cur := ConfigOf(m)
		if ch := messages.DiffConfig(prev, cur); !ch.Empty() {
			sum := ch.Summary()
			var d messages.InConfigData
			if json.Unmarshal(ap.Input.Data, &d) == nil && d.RollbackTo > 0 {
				sum = fmt.Sprintf("rollback to %d: %s", d.RollbackTo, sum)
			}
			out = append(out, messages.ConfigChange{Seq: ap.Input.Seq, Time: ap.Input.Time, By: messages.WhoOf(ap.Input.By), Summary: sum, Changes: ch})
		}
		prev = cur
	}}.Run(ctx, j)
	return out, err
}

// endsLayer reports whether an input ended a layer by itself (its
// lifetime did): a change of the configuration the light made.
func endsLayer(res machine.Result) bool {
	for _, o := range res.Outputs {
		if o.Type == messages.OutLayer {
			return true
		}
	}
	return false
}

// ConfigOf is the machine's configuration without its variables, which
// inputs of every kind change.
func ConfigOf(m *machine.Machine) messages.ApplyRequest {
	c := m.Export()
	c.Vars = nil
	// A schedule journaled without tz is UTC: named so, a rollback keeps
	// it there instead of giving it the daemon's zone.
	for i := range c.Schedules {
		c.Schedules[i].TZ = c.Schedules[i].Zone()
	}
	return c
}

// Rebuild replays light up to input to from j, from the nearest
// snapshot before it (past or latest), or from the start when none is;
// past what the journal keeps, the refusal says where it starts. The
// summary's Machine is the light right after to.
func Rebuild(ctx context.Context, j Events, light string, to uint64) (ReplaySummary, error) {
	best, oldest, err := nearestSnapshot(ctx, j, light, to)
	if err != nil {
		return ReplaySummary{}, err
	}
	r := Replay{Light: light, ToSeq: to}
	if best != nil {
		if r.Snapshot, err = best.load(ctx, j); err != nil {
			return ReplaySummary{}, err
		}
	}
	sum, err := r.Run(ctx, j)
	if mi := (*MissingInputError)(nil); errors.As(err, &mi) && best == nil && oldest > 0 {
		return sum, &wire.Error{Code: 404, Msg: fmt.Sprintf("the journal keeps light %s's past from input %d on: compaction removed what came before", light, oldest)}
	}
	return sum, err
}
