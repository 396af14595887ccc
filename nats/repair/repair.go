package repair

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/minio/highwayhash"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
)

// GapReason is the reason of the gap Repair journals.
const GapReason = "the journal was damaged on disk; lumen journal repair removed these events"

// Result says what Repair did.
type Result struct {
	Report Report   // what was damaged, before the repair
	Lights []string // the lights a gap was journaled for
}

// ErrInUse is wrapped by Repair's error when a daemon holds the data
// directory.
var ErrInUse = errors.New("repair: data directory in use")

// Repair repairs the journal under data, which no daemon may hold: it
// erases each damaged record (a block whose record lengths are damaged
// ends before them, as nats-server would cut it), rewrites a damaged
// meta.inf, and journals for every light a gap output naming the lost
// sequences, so that the lights start and replay around them. Every
// intact event keeps its sequence. A journal with nothing damaged is left
// as it is.
func Repair(ctx context.Context, data string, now time.Time) (Result, error) {
	if broker.InUse(data) {
		return Result{}, fmt.Errorf("%w: Lumen is running on %s: stop it first (lumen up, or its service), then repair", ErrInUse, data)
	}
	rep, err := Check(data)
	res := Result{Report: rep}
	if err != nil || !rep.Damaged() {
		return res, err
	}
	for _, b := range rep.Bad {
		if err := erase(rep.Stream, b); err != nil {
			return res, err
		}
	}
	if len(rep.Bad) > 0 {
		// The stream's index no longer matches its blocks: the server
		// rebuilds it from them.
		if err := os.Remove(filepath.Join(rep.Stream, msgsDir, stateFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return res, fmt.Errorf("repair: %w", err)
		}
	}
	if rep.Meta {
		if err := writeMeta(rep.Stream, now); err != nil {
			return res, err
		}
	}
	if len(rep.Bad) == 0 {
		return res, nil
	}
	res.Lights, err = journalGaps(ctx, data, rep.Lost(), now)
	return res, err
}

// erase makes the damaged place readable: its bytes become one erased
// record with a valid checksum (the server skips it, and its sequence
// stays used); a block whose end is damaged ends before it, as the
// server would cut it.
func erase(stream string, b Bad) error {
	path := filepath.Join(stream, msgsDir, b.Block)
	if b.Size == 0 {
		if err := os.Truncate(path, b.Offset); err != nil {
			return fmt.Errorf("repair: %w", err)
		}
		return nil
	}
	if b.Size < hdrSize+hashSize {
		return fmt.Errorf("repair: %s: %d damaged bytes at %d are too few to mark erased", b.Block, b.Size, b.Offset)
	}
	rec := make([]byte, b.Size)
	le := binary.LittleEndian
	le.PutUint32(rec[0:], uint32(b.Size))
	le.PutUint64(rec[4:], b.seq|ebit)
	// rec[12:20], the time, and rec[20:22], the subject's length, stay 0.
	key := sha256.Sum256(fmt.Appendf(nil, "%s-%d", subject.Stream, blockIndex(b.Block)))
	hh, _ := highwayhash.NewDigest64(key[:])
	hh.Write(rec[4:20])
	hh.Write(rec[hdrSize : b.Size-hashSize])
	copy(rec[b.Size-hashSize:], hh.Sum(nil))
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("repair: %w", err)
	}
	defer f.Close()
	if _, err := f.WriteAt(rec, b.Offset); err != nil {
		return fmt.Errorf("repair: %s: %w", b.Block, err)
	}
	return f.Sync()
}

// writeMeta writes the LUMEN stream's metadata afresh, with every
// light's events and the default budget: the daemon's next start sets
// its lights and budget.
func writeMeta(stream string, now time.Time) error {
	b, err := json.Marshal(broker.StreamConfig(0, nil))
	if err != nil {
		return fmt.Errorf("repair: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("repair: %w", err)
	}
	m["Created"] = now.UTC() // nats-server's FileStreamInfo
	if b, err = json.Marshal(m); err != nil {
		return fmt.Errorf("repair: %w", err)
	}
	if err := os.WriteFile(filepath.Join(stream, metaFile), b, 0o600); err != nil {
		return fmt.Errorf("repair: %w", err)
	}
	if err := os.WriteFile(filepath.Join(stream, metaSum), []byte(metaChecksum(b)), 0o600); err != nil {
		return fmt.Errorf("repair: %w", err)
	}
	return nil
}

// journalGaps appends a gap output of each lost range for every light
// of the journal (which light's events were lost cannot be told).
func journalGaps(ctx context.Context, data string, lost []Range, now time.Time) ([]string, error) {
	b, err := broker.Inspect(ctx, data)
	if err != nil {
		return nil, err
	}
	defer b.Shutdown()
	j := journal.New(b.JetStream())
	lights, err := j.Lights(ctx)
	if err != nil {
		return nil, err
	}
	for _, light := range lights {
		for _, r := range lost {
			env := messages.Gap(light, messages.OutGapData{From: r.From, To: r.To, Reason: GapReason}, now)
			if _, err := j.Append(ctx, subject.Out(light, messages.OutGap), messages.AppendEnvelope(nil, &env), journal.MsgID(env.ID)); err != nil {
				return lights, fmt.Errorf("repair: journal the gap of %s: %w", light, err)
			}
		}
	}
	return lights, nil
}

// String says what the repair did, for a person.
func (r Result) String() string {
	rep := r.Report
	if !rep.Damaged() {
		return fmt.Sprintf("the journal in %s is intact: nothing to repair", rep.Data)
	}
	var did []string
	if rep.Meta {
		did = append(did, "wrote its stream description (meta.inf) afresh")
	}
	for _, b := range rep.Bad {
		did = append(did, fmt.Sprintf("removed %s (damaged in %s at byte %d)", b.Lost, b.Block, b.Offset))
	}
	if len(rep.Bad) > 0 {
		lights := "no light (the journal has none)"
		if len(r.Lights) > 0 {
			lights = "light " + strings.Join(r.Lights, ", ")
		}
		did = append(did, "journaled a gap naming them for "+lights)
	}
	return fmt.Sprintf("repaired the journal in %s: %s; every other event is kept: start Lumen again", rep.Data, strings.Join(did, "; "))
}
