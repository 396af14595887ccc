package house

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/nats/journal"
)

// PisBucket tells the hub's clients each Pi's lights, and whether the Pi
// is connected and since when: so 'lumen ls' at a hub lists the lights of
// a Pi that is gone, as unreachable.
const PisBucket = "LUMEN_HOUSE_PIS"

// PiState is a Pi in PisBucket.
type PiState struct {
	Lights    []string  `json:"lights"`
	Connected bool      `json:"connected"`
	Since     time.Time `json:"since,omitzero"`
}

// publish makes PisBucket say what st says of reg's Pis.
func (h *Hub) publish(ctx context.Context, reg Registry, st Status) error {
	if h.pisKV == nil {
		kv, err := h.b.JetStream().CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: PisBucket, History: 1,
			Description: "Lumen house: each Pi's lights, connected or not since when"})
		if err != nil {
			return fmt.Errorf("house: %s: %w", PisBucket, err)
		}
		h.pisKV = kv
		// Pis removed while the hub was not running are still there.
		if keys, err := kv.ListKeys(ctx); err == nil {
			for pi := range keys.Keys() {
				h.published[pi] = ""
			}
		}
	}
	kv := h.pisKV
	for _, p := range reg.Pis {
		s := st.Pis[p.Name]
		b, err := json.Marshal(PiState{Lights: p.Lights, Connected: s.Connected, Since: s.Since})
		if err != nil {
			return err
		}
		if h.published[p.Name] == string(b) {
			continue
		}
		if _, err := kv.Put(ctx, p.Name, b); err != nil {
			return fmt.Errorf("house: %s: %w", PisBucket, err)
		}
		h.published[p.Name] = string(b)
	}
	for pi := range h.published {
		if reg.Find(pi) == nil {
			if err := kv.Delete(ctx, pi); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
				return fmt.Errorf("house: %s: %w", PisBucket, err)
			}
			delete(h.published, pi)
		}
	}
	return nil
}

// Absent is a light of the house that is not running.
type Absent struct {
	Light, Pi string
	// Connected and Since are its Pi's: a Pi that is connected but does
	// not run the light, or one that is gone, since when.
	Connected bool
	Since     time.Time
}

// Unreachable returns the lights of the house's Pis that are not among
// running, sorted; none where js is not a hub's. It reads PisBucket with
// no consumer (readBucket).
func Unreachable(ctx context.Context, js jetstream.JetStream, running []string) ([]Absent, error) {
	pis, err := readBucket(ctx, js, PisBucket)
	if errors.Is(err, journal.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("house: %s: %w", PisBucket, err)
	}
	var out []Absent
	for pi, b := range pis {
		var s PiState
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, fmt.Errorf("house: %s %s: %w", PisBucket, pi, err)
		}
		for _, l := range s.Lights {
			if !slices.Contains(running, l) {
				out = append(out, Absent{Light: l, Pi: pi, Connected: s.Connected, Since: s.Since})
			}
		}
	}
	slices.SortFunc(out, func(a, b Absent) int { return strings.Compare(a.Light, b.Light) })
	return out, nil
}
