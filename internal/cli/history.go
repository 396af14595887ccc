package cli

import (
	"context"
	"fmt"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/wire"
)

// configYAML is the light's configuration right after input seq, as
// export prints it without the variables.
func (t *Term) ConfigYAML(ctx context.Context, seq uint64) (string, error) {
	g, err := t.GetAt(ctx, messages.GetRequest{Seq: seq})
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
func (t *Term) ChangeYAML(ctx context.Context, seq uint64) (prev uint64, before, after string, err error) {
	h, err := Call(ctx, t, messages.VerbHistory, wire.Light.History)
	if err != nil {
		return 0, "", "", err
	}
	for _, c := range h.Changes {
		if c.Seq == seq {
			if prev != 0 {
				if before, err = t.ConfigYAML(ctx, prev); err != nil {
					return 0, "", "", err
				}
			}
			after, err = t.ConfigYAML(ctx, seq)
			return prev, before, after, err
		}
		prev = c.Seq
	}
	return 0, "", "", fmt.Errorf("input %d changed no configuration of light %s: 'lumen history' lists the changes, 'lumen diff %d %d' compares any two", seq, t.Light, seq, seq)
}
