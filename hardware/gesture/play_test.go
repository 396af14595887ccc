package gesture

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/lumen-home/lumen/hardware"
)

// Play leaves the button up however it ends.
func TestPlayReleases(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cancel string // when the context ends: "" never, "held" while held, "down" during the press's request
		upErr  error  // what the first release returns
		want   []bool
		err    error
	}{
		{name: "click", want: []bool{true, false}},
		{name: "interrupted while held", cancel: "held", want: []bool{true, false}, err: ErrInterrupted},
		{name: "interrupted during the press", cancel: "down", want: []bool{true, false}, err: ErrInterrupted},
		{name: "release fails once", upErr: errors.New("timeout"), want: []bool{true, false, false}, err: errors.New("timeout")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var sent []bool
			down := false
			edge := func(ectx context.Context, d bool) error {
				sent = append(sent, d)
				if d && tc.cancel == "down" {
					cancel()
					return ectx.Err()
				}
				if d && tc.cancel == "held" {
					time.AfterFunc(10*time.Millisecond, cancel)
				}
				if !d && tc.upErr != nil && len(sent) == 2 {
					return tc.upErr
				}
				if ectx.Err() != nil {
					return ectx.Err()
				}
				if !d && !down {
					return hardware.ErrButtonUp
				}
				down = d
				return nil
			}
			err := Play(ctx, []time.Duration{200 * time.Millisecond}, PressGap, edge)
			if !slices.Equal(sent, tc.want) {
				t.Errorf("edges sent %v, want %v", sent, tc.want)
			}
			if (err == nil) != (tc.err == nil) || err != nil && err.Error() != tc.err.Error() && !errors.Is(err, tc.err) {
				t.Errorf("Play = %v, want %v", err, tc.err)
			}
			if down {
				t.Error("the button is left down")
			}
		})
	}
}
