package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/hardware/gesture"
	"github.com/lumen-home/lumen/messages"
)

// errHeld is the simulated button's refusal of a press while it is down.
var errHeld = errors.New("the light's simulated button is held down (by an interrupted program?); release it with 'lumen press release'")

// edge sends the simulated button's edges to t.Light over nc, with the
// button's refusals of an edge it is at already as hardware's errors.
func (t *Term) Edge(nc *nats.Conn) gesture.Edge {
	return func(ctx context.Context, down bool) error {
		e := messages.EdgeUp
		if down {
			e = messages.EdgeDown
		}
		_, err := t.RequestOn(ctx, nc, messages.VerbButton, messages.ButtonRequest{Edge: e})
		switch {
		case err == nil:
			return nil
		case strings.HasPrefix(err.Error(), messages.ButtonIsDown):
			return errHeld
		case strings.HasPrefix(err.Error(), messages.ButtonIsUp):
			return fmt.Errorf("%w: %w", errNotHeld, hardware.ErrButtonUp)
		}
		return err
	}
}

// errNotHeld is what lumen press release says of a button that is up.
var errNotHeld = errors.New("the button is not held down: there is nothing to release")

// release lets go of the simulated button; one that is up already is
// said, and is not an error.
func (t *Term) Release(ctx context.Context) error {
	nc, err := t.Open(ctx)
	if err != nil {
		return err
	}
	defer nc.Close()
	switch err := t.Edge(nc)(ctx, false); {
	case errors.Is(err, errNotHeld):
		fmt.Fprintln(t.Stdout, errNotHeld)
	case err != nil:
		return err
	default:
		fmt.Fprintln(t.Stdout, "released the button")
	}
	return nil
}
