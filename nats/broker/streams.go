package broker

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/nats/subject"
)

// DuplicateWindow is how long the LUMEN stream remembers message ids
// (Nats-Msg-Id) to drop re-sent events.
const DuplicateWindow = 2 * time.Minute

// StreamConfig is the configuration of the LUMEN stream with a size budget
// of maxBytes (DefaultMaxBytes when maxBytes <= 0), taking the events of
// lights (of every light when lights is nil): a publish to the inputs of
// a light that does not run here is not journaled, and in a house a Pi's
// journal never takes another Pi's events.
//
// The stream keeps everything until the budget is reached and then refuses
// new events (DiscardNew) instead of dropping old ones: nothing may go
// before a snapshot covers it (DESIGN.md, durability contract 5), so the
// daemon purges what snapshots cover.
func StreamConfig(maxBytes int64, lights []string) jetstream.StreamConfig {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	subjects := []string{subject.AllEvents}
	if lights != nil {
		subjects = subjects[:0]
		for _, l := range lights {
			subjects = append(subjects, subject.Events(l))
		}
	}
	return jetstream.StreamConfig{
		Name:        subject.Stream,
		Description: "Lumen journal: every input and output of every light",
		Subjects:    subjects,
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.FileStorage,
		Replicas:    1,
		MaxMsgs:     -1,
		MaxBytes:    maxBytes,
		Discard:     jetstream.DiscardNew,
		Duplicates:  DuplicateWindow,
		// Direct gets read the last event of a subject without a
		// round trip through the stream leader's API queue.
		AllowDirect: true,
	}
}

// SnapshotConfig is the configuration of the LUMEN_SNAP bucket: one
// snapshot per light, only the latest kept.
func SnapshotConfig() jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{
		Bucket:      subject.SnapshotBucket,
		Description: "Lumen snapshots: the latest state of each light",
		History:     1,
		Storage:     jetstream.FileStorage,
		Replicas:    1,
	}
}

// EnsureStreams creates the LUMEN stream (see StreamConfig) and the
// LUMEN_SNAP bucket, or updates them to the current configuration, with
// the inputs of lights (nil keeps the stream's subjects). It is idempotent,
// so it runs on every start.
//
// What already has the configuration is left as it is: an update
// rewrites the stream's metadata, which a full disk would refuse, and a
// daemon must start on a full disk (reads and the LED work; changes get
// 507 until there is room).
func EnsureStreams(ctx context.Context, js jetstream.JetStream, maxBytes int64, lights []string) error {
	cfg := StreamConfig(maxBytes, lights)
	s, err := js.Stream(ctx, subject.Stream)
	if err == nil && lights == nil {
		cfg.Subjects = s.CachedInfo().Config.Subjects
	}
	if err != nil || !sameStream(s.CachedInfo().Config, cfg) {
		if _, err := js.CreateOrUpdateStream(ctx, cfg); err != nil {
			return fmt.Errorf("broker: ensure stream %s: %w", subject.Stream, err)
		}
	}
	want := SnapshotConfig()
	// Of the bucket's configuration only its history is ours to keep.
	if kv, err := js.KeyValue(ctx, want.Bucket); err == nil {
		if st, err := kv.Status(ctx); err == nil && st.History() == int64(want.History) {
			return nil
		}
	}
	if _, err := js.CreateOrUpdateKeyValue(ctx, want); err != nil {
		return fmt.Errorf("broker: ensure bucket %s: %w", subject.SnapshotBucket, err)
	}
	return nil
}

// sameStream reports whether have already has what StreamConfig sets.
func sameStream(have, want jetstream.StreamConfig) bool {
	return slices.Equal(have.Subjects, want.Subjects) && have.Description == want.Description &&
		have.Retention == want.Retention && have.Storage == want.Storage && have.Replicas == want.Replicas &&
		have.MaxMsgs == want.MaxMsgs && have.MaxBytes == want.MaxBytes && have.Discard == want.Discard &&
		have.Duplicates == want.Duplicates && have.AllowDirect == want.AllowDirect
}
