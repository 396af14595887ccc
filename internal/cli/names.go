package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/describe"
)

// NamesFlags are lumen names' flags: --room (Room nil when not given),
// --alias (repeatable; AliasSet when given at all) and --no-aliases.
type NamesFlags struct {
	Room      *string
	Aliases   []string
	AliasSet  bool
	NoAliases bool
}

// Request is the set_names body of the flags, and false when they set
// nothing (lumen names alone shows the names).
func (f NamesFlags) Request() (messages.NamesRequest, bool, error) {
	var q messages.NamesRequest
	if f.AliasSet && f.NoAliases {
		return q, false, errors.New("--alias and --no-aliases together: give the aliases, or --no-aliases to clear them")
	}
	q.Room = f.Room
	switch {
	case f.NoAliases:
		q.Aliases = &[]string{}
	case f.AliasSet:
		aliases := f.Aliases
		q.Aliases = &aliases
	}
	return q, q.Room != nil || q.Aliases != nil, nil
}

// Names prints the light's room and aliases, or sets those the flags
// give and prints what changed, and what people can now say.
func (t *Term) Names(ctx context.Context, f NamesFlags) error {
	q, set, err := f.Request()
	if err != nil {
		return Usage(err)
	}
	if !set {
		g, err := t.Get(ctx)
		if err != nil {
			return err
		}
		if t.JSON {
			return t.printValue(messages.NamesRequest{Room: &g.Room, Aliases: &g.Aliases})
		}
		fmt.Fprintln(t.Stdout, describe.LightNames(t.Light, g.Room, g.Aliases))
		return nil
	}
	// Checked here too, so that a mistake is a usage error, in the
	// light's words.
	if _, err := q.Input(); err != nil {
		return Usage(err)
	}
	b, err := t.Request(ctx, messages.VerbSetNames, q)
	if err != nil {
		return err
	}
	if t.JSON {
		return t.PrintJSON(b)
	}
	var r messages.Reply
	if err := json.Unmarshal(b, &r); err != nil || r.Changes == nil {
		return fmt.Errorf("unexpected reply: %.300s", b)
	}
	fmt.Fprintln(t.Stdout, describe.NamesChanged(*r.Changes, q))
	return nil
}
