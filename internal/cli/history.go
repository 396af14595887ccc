package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/describe"
	"github.com/lumen-home/lumen/nats/wire"
)

// configYAML is the light's configuration right after input seq, as
// export prints it without the variables.
func (t *Term) configYAML(ctx context.Context, seq uint64) (string, error) {
	g, err := t.getAt(ctx, messages.GetRequest{Seq: seq})
	if err != nil {
		return "", err
	}
	cfg := g.Config()
	cfg.Vars = nil
	b, err := messages.ToYAML(cfg)
	return string(b), err
}

// changeYAML is the configuration before and after change seq: the
// one after the change prev before it in the history, or none (prev 0).
func (t *Term) changeYAML(ctx context.Context, seq uint64) (prev uint64, before, after string, err error) {
	h, err := Call(ctx, t, messages.VerbHistory, wire.Light.History)
	if err != nil {
		return 0, "", "", err
	}
	for _, c := range h.Changes {
		if c.Seq == seq {
			if prev != 0 {
				if before, err = t.configYAML(ctx, prev); err != nil {
					return 0, "", "", err
				}
			}
			after, err = t.configYAML(ctx, seq)
			return prev, before, after, err
		}
		prev = c.Seq
	}
	return 0, "", "", fmt.Errorf("input %d changed no configuration of light %s: 'lumen history' lists the changes, 'lumen diff %d %d' compares any two", seq, t.Light, seq, seq)
}

// History prints every change of the light's configuration.
func (t *Term) History(ctx context.Context) error {
	h, err := Call(ctx, t, messages.VerbHistory, wire.Light.History)
	if err != nil {
		return err
	}
	if t.JSON {
		return t.printValue(h)
	}
	return describe.History(t.Stdout, h)
}

// Diff prints configuration change argv[0] as a YAML diff, or the
// changes from after argv[0] to after argv[1].
func (t *Term) Diff(ctx context.Context, argv []string) error {
	var seqs []uint64
	for _, s := range argv {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil || n == 0 {
			return Usage(fmt.Errorf("SEQ %q is not a sequence ('lumen history' lists them)", s))
		}
		seqs = append(seqs, n)
	}

	var from, to string
	var err error
	prev, last := uint64(0), seqs[len(seqs)-1]
	if len(seqs) == 2 {
		prev = seqs[0]
		if from, err = t.configYAML(ctx, prev); err == nil {
			to, err = t.configYAML(ctx, last)
		}
	} else {
		prev, from, to, err = t.changeYAML(ctx, last)
	}
	if err != nil {
		return err
	}
	fromLabel := fmt.Sprintf("light %s after input %d", t.Light, prev)
	if prev == 0 {
		fromLabel = fmt.Sprintf("light %s before any configuration", t.Light)
	}
	diff := describe.Diff(fromLabel, fmt.Sprintf("light %s after input %d", t.Light, last), from, to)
	if diff == "" {
		diff = "no difference\n"
	}
	_, err = io.WriteString(t.Stdout, diff)
	return err
}
