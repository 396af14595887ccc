package messages

import (
	"context"
	"errors"
	"fmt"
)

// A light's configuration in the past, as lumen export prints it: what
// lumen diff and the page's History compare.

// PastReader reads a light's past: its model right after an input (get
// {"seq":N}) and its configuration changes (history). wire.Light is one.
type PastReader interface {
	GetAt(ctx context.Context, q GetRequest) (GetReply, error)
	History(ctx context.Context) (HistoryReply, error)
}

// ErrNotAChange means an input changed no configuration of the light:
// it is no entry of its history.
var ErrNotAChange = errors.New("messages: the input changed no configuration")

// ConfigYAMLAt is the light's configuration right after input seq, as
// lumen export prints it, without the variables (they are data, not
// configuration: every click would change them).
func ConfigYAMLAt(ctx context.Context, r PastReader, seq uint64) (string, error) {
	g, err := r.GetAt(ctx, GetRequest{Seq: seq})
	if err != nil {
		return "", fmt.Errorf("messages: the configuration after input %d: %w", seq, err)
	}
	cfg := g.Config()
	cfg.Vars = nil
	b, err := ToYAML(cfg)
	if err != nil {
		return "", fmt.Errorf("messages: the configuration after input %d: %w", seq, err)
	}
	return string(b), nil
}

// ChangeYAML is the configuration before and after change seq: after
// the change prev before it in the history, or none (prev 0, before "")
// for the first. An input that is no change is ErrNotAChange.
func ChangeYAML(ctx context.Context, r PastReader, seq uint64) (prev uint64, before, after string, err error) {
	h, err := r.History(ctx)
	if err != nil {
		return 0, "", "", fmt.Errorf("messages: the history: %w", err)
	}
	for _, c := range h.Changes {
		if c.Seq == seq {
			if prev != 0 {
				if before, err = ConfigYAMLAt(ctx, r, prev); err != nil {
					return 0, "", "", err
				}
			}
			after, err = ConfigYAMLAt(ctx, r, seq)
			return prev, before, after, err
		}
		prev = c.Seq
	}
	return 0, "", "", fmt.Errorf("%w: input %d", ErrNotAChange, seq)
}
