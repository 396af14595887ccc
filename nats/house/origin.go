package house

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
)

// Reading the house stream: each event carries, in its Nats-Stream-Source
// header, the journal it was copied from and its sequence there. The
// sequence is the event's identity (causes, output ids and random() use
// it), and the journal must be the one of the Pi that owns the light: a
// Pi could store another light's events in its own journal, and the
// house takes them only from their owner.

// LightsBucket maps each light of the house to its Pi, for the readers
// of the house stream; the hub keeps it in step with its registry.
const LightsBucket = "LUMEN_HOUSE_LIGHTS"

// SourceName is how the Nats-Stream-Source header names a Pi's journal:
// the stream's name and the hash nats-server makes of the API prefix the
// house reaches it by (TestSourceName checks it against a real copy).
func SourceName(pi string) string { return subject.Stream + ":" + serverHash(APIPrefix(pi)) }

// sourceHeader is the header in which a copied event says where from.
const sourceHeader = "Nats-Stream-Source"

const hashDigits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// serverHash is nats-server's 8-character name hash.
func serverHash(s string) string {
	b := sha256.Sum256([]byte(s))
	out := make([]byte, 8)
	for i := range out {
		out[i] = hashDigits[int(b[i])%len(hashDigits)]
	}
	return string(out)
}

// Origin reads an event of the house stream: its sequence in the journal
// it was copied from, and whether that journal is the one of the Pi
// owner says runs its light ("": none).
func Origin(owner func(light string) string) func(subj string, h nats.Header) (uint64, bool) {
	return func(subj string, h nats.Header) (uint64, bool) {
		light, _, _, ok := subject.Parse(subj)
		if !ok {
			return 0, false
		}
		pi := owner(light)
		if pi == "" {
			return 0, false
		}
		return copiedFrom(h, pi)
	}
}

// copiedFrom reads the Nats-Stream-Source header of an event of the
// house stream: its sequence in the journal it was copied from, and
// whether that journal is pi's.
func copiedFrom(h nats.Header, pi string) (uint64, bool) {
	fields := strings.Fields(h.Get(sourceHeader))
	if len(fields) < 2 {
		return 0, false
	}
	seq, err := strconv.ParseUint(fields[1], 10, 64)
	if err != nil {
		return 0, false
	}
	name, _, _ := strings.Cut(fields[0], ":C=")
	return seq, name == SourceName(pi)
}

// OpenJournal returns the journal js reaches: a daemon's LUMEN, or at a
// hub the house stream, read with each event's own sequence and only
// from its light's Pi. It needs no consumer, so a client in an account
// that imports only the streams' STREAM.INFO and DIRECT.GET opens it.
func OpenJournal(ctx context.Context, js jetstream.JetStream) (*journal.Journal, error) {
	if ok, err := reaches(ctx, js, subject.Stream); err != nil {
		return nil, fmt.Errorf("house: the journal: %w", err)
	} else if ok {
		return journal.New(js), nil
	}
	if ok, err := reaches(ctx, js, Stream); err != nil {
		return nil, fmt.Errorf("house: the house journal: %w", err)
	} else if !ok {
		return nil, fmt.Errorf("house: no journal here: neither %s (lumen up) nor %s (lumen hub) is reachable", subject.Stream, Stream)
	}
	origin, err := ReadOrigin(ctx, js)
	if err != nil {
		return nil, err
	}
	return journal.New(js, journal.WithStream(Stream), journal.WithOrigin(origin)), nil
}

// ReadOrigin is Origin with the owners the lights bucket names. A reader
// may follow the house for days: a light it does not know (one that
// joined since; the hub names its owner before it copies its Pi's
// journal) reads the bucket again, at most every missReadEvery.
func ReadOrigin(ctx context.Context, js jetstream.JetStream) (func(subj string, h nats.Header) (uint64, bool), error) {
	o := &owners{js: js}
	m, err := readOwners(ctx, js)
	if err != nil {
		return nil, err
	}
	o.m, o.read = m, time.Now()
	return Origin(o.of), nil
}

// missReadEvery bounds how often owners reads the bucket again for a
// light it does not know.
const missReadEvery = 100 * time.Millisecond

// owners is which Pi runs each light, read again on a miss.
type owners struct {
	js   jetstream.JetStream
	mu   sync.Mutex
	m    map[string]string
	read time.Time
}

func (o *owners) of(light string) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if pi := o.m[light]; pi != "" || time.Since(o.read) < missReadEvery {
		return pi
	}
	o.read = time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if m, err := readOwners(ctx, o.js); err == nil {
		o.m = m
	}
	return o.m[light]
}

// reaches reports whether js reaches stream: false when it is not there,
// or not imported to the client's account (nobody answers its info).
func reaches(ctx context.Context, js jetstream.JetStream, stream string) (bool, error) {
	_, err := js.Stream(ctx, stream)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, jetstream.ErrStreamNotFound), errors.Is(err, nats.ErrNoResponders):
		return false, nil
	}
	return false, err
}

func readOwners(ctx context.Context, js jetstream.JetStream) (map[string]string, error) {
	values, err := readBucket(ctx, js, LightsBucket)
	if err != nil {
		return nil, fmt.Errorf("house: which Pi runs which light (%s): %w", LightsBucket, err)
	}
	owners := make(map[string]string, len(values))
	for light, pi := range values {
		owners[light] = string(pi)
	}
	return owners, nil
}

// The header that marks a deleted key's last message in a key-value
// bucket's stream, and its values.
const (
	kvOperation = "KV-Operation"
	kvDelete    = "DEL"
	kvPurge     = "PURGE"
)

// readBucket returns every key of bucket and its value. It reads the
// last message of each key's subject by direct gets (journal.Latest),
// with no consumer: a client that imports only the bucket stream's
// STREAM.INFO and DIRECT.GET reads it. It returns journal.ErrNotFound
// when js reaches no such bucket.
func readBucket(ctx context.Context, js jetstream.JetStream, bucket string) (map[string][]byte, error) {
	prefix := "$KV." + bucket + "."
	values := map[string][]byte{}
	err := journal.Latest(ctx, js, "KV_"+bucket, prefix+">", func(m journal.Msg) error {
		switch m.Header.Get(kvOperation) {
		case kvDelete, kvPurge:
			return nil
		}
		values[strings.TrimPrefix(m.Subject, prefix)] = m.Data
		return nil
	})
	if err != nil {
		return nil, err
	}
	return values, nil
}

// writeOwners makes the lights bucket say what the registry says.
func writeOwners(ctx context.Context, js jetstream.JetStream, r Registry) error {
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: LightsBucket, History: 1,
		Description: "Lumen house: the Pi that runs each light"})
	if err != nil {
		return fmt.Errorf("house: %s: %w", LightsBucket, err)
	}
	want := map[string]string{}
	for _, p := range r.Pis {
		for _, l := range p.Lights {
			want[l] = p.Name
		}
	}
	// The lights of a removed Pi keep their owner: the house keeps their
	// history, and its readers take it from that Pi.
	for l, pi := range want {
		if _, err := kv.Put(ctx, l, []byte(pi)); err != nil {
			return fmt.Errorf("house: %s: %w", LightsBucket, err)
		}
	}
	return nil
}
