package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/lumen-home/lumen/actors/light/past"
	"github.com/lumen-home/lumen/internal/atomicfile"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/describe"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/nats/wire"
)

// Why prints why the light is in its state, or what it did at the event
// argv names; from the journal slice file when given.
func (t *Term) Why(ctx context.Context, argv []string, file string) error {
	var seq uint64
	if len(argv) == 1 {
		var err error
		if seq, err = strconv.ParseUint(argv[0], 10, 64); err != nil || seq == 0 {
			return Usage(fmt.Errorf("SEQ %q is not a sequence ('lumen tail --since 1h' shows them)", argv[0]))
		}
	}
	var w *messages.WhyReply
	if file != "" {
		j, closeFn, err := t.events(ctx, "", file)
		if err != nil {
			return err
		}
		defer closeFn()
		if w, err = past.Why(ctx, j, t.Light, seq); err != nil {
			return err
		}
		w.OK = true
	} else {
		reply, err := Call(ctx, t, messages.VerbWhy, func(l wire.Light, ctx context.Context) (messages.WhyReply, error) { return l.Why(ctx, seq) })
		if err != nil {
			return err
		}
		w = &reply
	}
	if t.JSON {
		return t.printValue(w)
	}
	_, err := io.WriteString(t.Stdout, past.WhyText(w))
	return err
}

// ExportJournal writes a slice of the light's journal (its last since, or
// all of it) to out, read from data or the running daemon.
func (t *Term) ExportJournal(ctx context.Context, out, data string, since time.Duration) error {
	if out == "" {
		return Usage(errors.New("-o FILE is required: where to write the slice"))
	}
	if since < 0 {
		return Usage(errors.New("--since must be a duration into the past, e.g. 2h"))
	}
	j, closeFn, err := t.events(ctx, data, "")
	if err != nil {
		return err
	}
	defer closeFn()
	var from uint64
	if since > 0 {
		jj, ok := j.(*journal.Journal)
		if !ok {
			return errors.New("--since needs the journal")
		}
		if from, err = jj.SeqAt(ctx, subject.AllIn(t.Light), time.Now().Add(-since)); err != nil {
			return err
		}
		if from == 0 {
			return errors.New("this journal (a hub's house copy) cannot be cut by time; export at the Pi")
		}
	}
	fmt.Fprintln(t.Stderr, describe.ReadingJournal(t.Light))
	s, err := past.ExportSlice(ctx, j, t.Light, from)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(out, 0o600, func(w io.Writer) error {
		_, err := s.WriteTo(w)
		return err
	}); err != nil {
		return err
	}
	first, last := uint64(0), uint64(0)
	if n := len(s.Events); n > 0 {
		first, last = s.Events[0].Seq, s.Events[n-1].Seq
	}
	fmt.Fprintln(t.Stdout, describe.SliceWritten(len(s.Events), t.Light, first, last, s.Snapshot != nil, out))
	return nil
}

// WhatIf replays the light's recorded inputs (of the last since, or from
// fromSeq) against the configuration in file, and prints what differs.
func (t *Term) WhatIf(ctx context.Context, file string, since time.Duration, fromSeq uint64) error {
	if file == "" {
		return Usage(errors.New("whatif needs -f FILE: the configuration to try"))
	}
	if since != 0 && fromSeq != 0 {
		return Usage(errors.New("give --since or --from-seq, not both"))
	}
	if since < 0 {
		return Usage(errors.New("--since must be a duration into the past, e.g. 24h"))
	}
	raw, body, err := t.ReadFile(file)
	if err != nil {
		return err
	}
	req := messages.WhatIfRequest{Config: body, FromSeq: fromSeq}
	if since > 0 {
		req.Since = since.String()
	}
	w, err := Call(ctx, t, messages.VerbWhatIf, func(l wire.Light, ctx context.Context) (messages.WhatIfReply, error) { return l.WhatIf(ctx, req) })
	if err != nil {
		return blame(file, raw, err)
	}
	if t.JSON {
		return t.printValue(w)
	}
	_, err = io.WriteString(t.Stdout, past.WhatIfText(&w))
	return err
}

// ReplayOpts are lumen replay's flags.
type ReplayOpts struct {
	Data, File                  string
	ToSeq                       uint64
	Verify, FromSnapshot, Quiet bool
}

// Replay replays the light's journal (a slice file, a stopped data dir or
// the running daemon's) as o says, printing each applied input unless
// quiet.
func (t *Term) Replay(ctx context.Context, o ReplayOpts) error {
	j, closeFn, err := t.events(ctx, o.Data, o.File)
	if err != nil {
		return err
	}
	defer closeFn()
	r := past.Replay{Light: t.Light, ToSeq: o.ToSeq, Verify: o.Verify, FromSnapshot: o.FromSnapshot,
		OnSnapshot: func(in uint64) { fmt.Fprintln(t.Stdout, describe.ReplayFromSnapshot(in)) },
		OnGap: func(g messages.OutGapData, in uint64) {
			fmt.Fprintln(t.Stdout, describe.ReplayGap(g, in))
		}}
	if !o.Quiet {
		r.OnApplied = func(ap *past.Applied) { fmt.Fprintln(t.Stdout, ap.Line()) }
	}
	sum, err := r.Run(ctx, j)
	fmt.Fprintln(t.Stdout, describe.Replayed(t.Light, sum.String()))
	if err != nil {
		return err
	}
	if o.Verify {
		fmt.Fprintln(t.Stdout, describe.Verified())
	}
	return nil
}
