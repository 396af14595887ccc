package light

import (
	"context"

	"github.com/lumen-home/lumen/nats/subject"
)

// compact bounds the journal's size: once it holds more than the
// threshold, the events this light's fresh snapshot covers are purged.
// Nothing a snapshot does not cover is ever dropped.
func (a *Actor) compact(ctx context.Context) {
	if a.cfg.CompactAbove == 0 {
		return
	}
	size, _, err := a.cfg.Journal.Size(ctx)
	if err == nil && size > a.cfg.CompactAbove {
		// Outputs of covered inputs stored after a.applied are kept; a
		// fold from the snapshot skips them by their cause.
		err = a.cfg.Journal.Purge(ctx, subject.Events(a.cfg.Name), a.applied+1)
	}
	if err != nil {
		a.cfg.Logf("light %s: compact the journal: %v", a.cfg.Name, err)
	}
}
