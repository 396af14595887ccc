package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/actors/source/datasource"
	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/hardware/gesture"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/describe"
)

// errHeld is the simulated button's refusal of a press while it is down.
var errHeld = errors.New("the light's simulated button is held down (by an interrupted program?); release it with 'lumen press release'")

// edge sends the simulated button's edges to t.Light over nc, with the
// button's refusals of an edge it is at already as hardware's errors.
func (t *Term) edge(nc *nats.Conn) gesture.Edge {
	return func(ctx context.Context, down bool) error {
		e := messages.EdgeUp
		if down {
			e = messages.EdgeDown
		}
		_, err := t.requestOn(ctx, nc, messages.VerbButton, messages.ButtonRequest{Edge: e})
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
func (t *Term) release(ctx context.Context) error {
	nc, err := t.Open(ctx)
	if err != nil {
		return err
	}
	defer nc.Close()
	switch err := t.edge(nc)(ctx, false); {
	case errors.Is(err, errNotHeld):
		fmt.Fprintln(t.Stdout, errNotHeld)
	case err != nil:
		return err
	default:
		fmt.Fprintln(t.Stdout, describe.Released())
	}
	return nil
}

// Press presses the light's simulated button as argv says (click,
// double, hold for holdFor, release), and prints what the light did.
func (t *Term) Press(ctx context.Context, argv []string, holdFor time.Duration) error {
	kind := "click"
	if len(argv) == 1 {
		kind = argv[0]
	}
	if kind == "release" {
		return t.release(ctx)
	}
	plan, want, err := gesture.Presses(kind, holdFor)
	if err != nil {
		return Usage(err)
	}
	nc, ch, err := t.watchLight(ctx)
	if err != nil {
		return err
	}
	defer nc.Close()
	if kind == "double" {
		// Nothing reacts to a double click in this state: the
		// light decides each click on its release, so a double
		// press is two clicks.
		var led messages.LEDReply
		if b, err := t.requestOn(ctx, nc, messages.VerbLED, struct{}{}); err == nil && json.Unmarshal(b, &led) == nil && !led.ClickWaits {
			fmt.Fprintln(t.Stderr, describe.DoubleIsTwoClicks())
			want = 2
		}
	}
	switch err := gesture.Play(ctx, plan, gesture.PressGap, t.edge(nc)); {
	case err == gesture.ErrInterrupted:
		return errors.New("interrupted: the button is released")
	case errors.Is(err, gesture.ErrInterrupted):
		// The release failed too: say how to let go.
		return fmt.Errorf("%w; 'lumen press release' lets go of the button", err)
	case err != nil:
		return err
	}
	// A click is decided on its release, or when the double-click
	// window closes if a rule reacts to a double click.
	seen := 0
	t.printEvents(ctx, ch, 3*time.Second, pressQuiet, func(m *nats.Msg) bool {
		one, all := messages.ButtonGesture(m.Data)
		if one {
			seen++
		}
		if all {
			seen = want
		}
		return seen >= want
	})
	if seen < want && ctx.Err() == nil {
		return fmt.Errorf("the light journaled %d of the %d gestures expected; is its button simulated (lumen up without GPIO)?", seen, want)
	}
	return nil
}

// GPIO drives a simulated input pin as argv says (PIN high, low or
// pulse, high for pulseFor), and prints what the light did.
func (t *Term) GPIO(ctx context.Context, argv []string, pulseFor time.Duration) error {
	pin, err := strconv.Atoi(argv[0])
	if err != nil || pin < 0 || pin > datasource.MaxGPIOPin {
		return Usage(fmt.Errorf("gpio %q: PIN is a BCM number from 0 to %d, e.g. 23", argv[0], datasource.MaxGPIOPin))
	}
	levels := map[string][]int{"high": {1}, "low": {0}, "pulse": {1, 0}}[argv[1]]
	if levels == nil {
		return Usage(fmt.Errorf("gpio %s %q: say high, low or pulse", argv[0], argv[1]))
	}
	nc, ch, err := t.watchLight(ctx)
	if err != nil {
		return err
	}
	defer nc.Close()
	changed := false
	for i, l := range levels {
		if i > 0 {
			time.Sleep(pulseFor)
		}
		r, err := t.client(nc).Light(t.Light).GPIO(ctx, pin, l)
		if err := t.inWords(nc, messages.VerbGPIO, err, time.Duration(t.Timeout)); err != nil {
			return err
		}
		changed = changed || r.Changed
	}
	if !changed {
		fmt.Fprintln(t.Stderr, describe.NoEdge(pin, argv[1]))
		return nil
	}
	// An edge no source wants (a falling edge of a rising source)
	// journals nothing, which is not an error.
	t.printEvents(ctx, ch, gpioWait, gpioQuiet, func(*nats.Msg) bool { return true })
	return nil
}

// pressQuiet is how long press keeps printing after the last event.
const pressQuiet = 400 * time.Millisecond

// gpioQuiet is how long `lumen gpio` keeps printing after the last event,
// and gpioWait how long it waits for the first: a source stores, then
// fires, each a round trip through the journal.
const (
	gpioQuiet = 400 * time.Millisecond
	gpioWait  = 2 * time.Second
)
