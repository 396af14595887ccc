package wire

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/subject"
)

// ErrNoHouse means no hub answers the house's subjects: the server is not
// a Pi of a house (or its hub is not reachable now).
var ErrNoHouse = errors.New("wire: not in a house: no hub answers")

// HouseLights asks the house for its directory (subject.HouseLights):
// every light of the house with its Pi, room, aliases, groups and
// states, sorted by light; a light whose Pi is away has Online false.
// On a server that is not a Pi of a house it returns an error wrapping
// ErrNoHouse.
func (c *Client) HouseLights(ctx context.Context) ([]messages.HouseLight, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	subj := subject.HouseLights()
	reply, err := c.nc.RequestWithContext(ctx, subj, nil)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return nil, fmt.Errorf("%w (on %s)", ErrNoHouse, subj)
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout):
		return nil, fmt.Errorf("%w on %s", ErrTimeout, subj)
	case err != nil:
		return nil, fmt.Errorf("wire: %s: %w", subj, err)
	}
	if err := Refusal(reply); err != nil {
		return nil, err
	}
	var r messages.HouseLightsReply
	if err := decode(subj, reply.Data, &r); err != nil {
		return nil, err
	}
	return r.Lights, nil
}
