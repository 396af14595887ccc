package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/describe"
	"github.com/lumen-home/lumen/nats/wire"
)

// pastReader reads the light's past for lumen diff, each request's error in
// the user's words (Call's), which the diff passes on as they are.
type pastReader struct{ t *Term }

// cliError is an error already in the user's words.
type cliError struct{ error }

func (p pastReader) GetAt(ctx context.Context, q messages.GetRequest) (messages.GetReply, error) {
	g, err := p.t.getAt(ctx, q)
	return g, inUserWords(err)
}

func (p pastReader) History(ctx context.Context) (messages.HistoryReply, error) {
	h, err := Call(ctx, p.t, messages.VerbHistory, wire.Light.History)
	return h, inUserWords(err)
}

func inUserWords(err error) error {
	if err == nil {
		return nil
	}
	return cliError{err}
}

// userWords is err as the user reads it: a request's own words, or what
// lumen diff says of an input that changed no configuration.
func (t *Term) userWords(err error, seq uint64) error {
	var ce cliError
	switch {
	case errors.As(err, &ce):
		return ce.error
	case errors.Is(err, messages.ErrNotAChange):
		return fmt.Errorf("input %d changed no configuration of light %s: 'lumen history' lists the changes, 'lumen diff %d %d' compares any two", seq, t.Light, seq, seq)
	}
	return err
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
		if from, err = messages.ConfigYAMLAt(ctx, pastReader{t}, prev); err == nil {
			to, err = messages.ConfigYAMLAt(ctx, pastReader{t}, last)
		}
	} else {
		prev, from, to, err = messages.ChangeYAML(ctx, pastReader{t}, last)
	}
	if err != nil {
		return t.userWords(err, last)
	}
	diff := describe.Diff(describe.ConfigLabel(t.Light, prev), describe.ConfigLabel(t.Light, last), from, to)
	if diff == "" {
		diff = "no difference\n"
	}
	_, err = io.WriteString(t.Stdout, diff)
	return err
}
