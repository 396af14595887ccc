package gesture

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lumen-home/lumen/hardware"
)

// Edge sends one raw edge of a simulated button (down: pressed). A
// release of a button that is up returns hardware.ErrButtonUp.
type Edge func(ctx context.Context, down bool) error

// ErrInterrupted is returned by Play when its context ends mid-gesture;
// the button was released (or never pressed).
var ErrInterrupted = errors.New("interrupted")

// releaseWithin bounds the release Play sends after its context ended.
const releaseWithin = 5 * time.Second

// Play presses and releases a button through edge, once per entry of
// downs (how long each press holds it down, as Presses returns), with gap
// between presses. Whatever happens after a press was sent (the context
// ends, as on Ctrl-C, or the release fails the first time) the button is
// released before Play returns: a button left down would refuse every
// later press. The release outlives ctx, bounded by releaseWithin.
func Play(ctx context.Context, downs []time.Duration, gap time.Duration, edge Edge) error {
	for i, d := range downs {
		if i > 0 && !sleep(ctx, gap) {
			return ErrInterrupted
		}
		if err := edge(ctx, true); err != nil {
			if ctx.Err() != nil {
				// The press may have reached the light before the
				// context ended: release it to be sure.
				return release(ctx, edge, ErrInterrupted)
			}
			return err
		}
		if !sleep(ctx, d) {
			return release(ctx, edge, ErrInterrupted)
		}
		if err := edge(ctx, false); err != nil {
			if ctx.Err() != nil {
				err = ErrInterrupted
			}
			return release(ctx, edge, err)
		}
	}
	return nil
}

// release sends the up edge with a context that outlives ctx and
// returns why (cause), with the release's own error if it failed.
func release(ctx context.Context, edge Edge, cause error) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseWithin)
	defer cancel()
	if err := edge(rctx, false); err != nil && !errors.Is(err, hardware.ErrButtonUp) {
		return fmt.Errorf("%w, and the button could not be released: %w", cause, err)
	}
	return cause
}

// sleep waits d, and reports false if ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
