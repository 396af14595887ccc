package broker

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Room reports whether there is room for new inputs: nil, or an error
// whose text is the sentence for whoever asked (the disk is full, what
// to do). New inputs are refused while the data directory's file system
// has less free space than Config.Reserve, so that what was already
// accepted (its outputs, snapshots, compaction) can still be written and
// a full disk never reaches JetStream; and while JetStream keeps a write
// error, until watchWrites has reloaded it. A statfs per call: 1.5 µs
// here (BenchmarkRoom), against the milliseconds of an fsynced append,
// so it is not cached.
func (b *Broker) Room() error {
	if isClosed(b.WriteFailed()) {
		return fmt.Errorf("the disk of %s filled up under the journal, which cannot write until there is room again; nothing was changed (reads and the LED still work): free some space there or move --data to a larger disk, and Lumen reopens the journal by itself", b.cfg.DataDir)
	}
	if b.cfg.Reserve <= 0 {
		return nil
	}
	free, err := FreeBytes(b.cfg.DataDir)
	if err != nil || free >= b.cfg.Reserve {
		// Without statfs JetStream's own errors tell.
		return nil
	}
	return fmt.Errorf("the disk is full: %s has %s free, less than the %s Lumen keeps for what it already accepted; nothing was changed (reads and the LED still work): free some space there or move --data to a larger disk, and Lumen carries on by itself",
		b.cfg.DataDir, Size(free), Size(b.cfg.Reserve))
}

// WriteFailed returns a channel that is closed once JetStream has met a
// write error, which Room then reports, and stays open while it has none.
// nats-server answers no publish it could not store: an append waits on
// this instead of on its whole timeout (journal.WithWriteFailed). After
// the reload, WriteFailed returns a new channel.
func (b *Broker) WriteFailed() <-chan struct{} {
	b.failedMu.Lock()
	defer b.failedMu.Unlock()
	return b.failed
}

// setWriteErr notes that JetStream keeps a write error, or no longer
// does: WriteFailed's channel is closed, or replaced by an open one.
func (b *Broker) setWriteErr(failed bool) {
	b.failedMu.Lock()
	defer b.failedMu.Unlock()
	switch closed := isClosed(b.failed); {
	case failed && !closed:
		close(b.failed)
	case !failed && closed:
		b.failed = make(chan struct{})
	}
}

// isClosed reports whether ch is closed.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Reload after a write error.
const (
	// reloadRoom is the free space a reload waits for when there is no
	// reserve.
	reloadRoom int64 = 1 << 20
	// roomPoll is how often the free space is looked at meanwhile.
	roomPoll = time.Second
)

// watchWrites reloads JetStream after a critical write error, once the
// disk has room again. nats-server keeps such an error in the stream (or
// consumer) that met it and fails, without answering, every later write
// there until the stream is loaded again: without a reload the journal
// would never take another event. Meanwhile Room refuses new inputs.
// The reload loads every stream from disk, as a restart would: what was
// acknowledged is there, the write that failed was never acknowledged.
func (b *Broker) watchWrites() {
	defer b.watching.Done()
	for {
		var why string
		select {
		case <-b.done:
			return
		case why = <-b.log.writeErr:
		}
		b.setWriteErr(true)
		want := max(b.cfg.Reserve, reloadRoom)
		b.logf("broker: JetStream could not write (%s): new inputs are refused until %s has %s free; then the journal is reloaded", why, b.cfg.DataDir, Size(want))
		for {
			free, err := FreeBytes(b.cfg.DataDir)
			if err == nil && free >= want {
				break
			}
			select {
			case <-b.done:
				return
			case <-time.After(roomPoll):
			}
		}
		if err := b.reloadJetStream(0); err != nil {
			b.logf("broker: reload JetStream: %v; inputs stay refused until lumen restarts", err)
			continue
		}
		// What the shutdown itself could not write is in the past now.
		select {
		case <-b.log.writeErr:
		default:
		}
		b.setWriteErr(false)
		b.logf("broker: there is room on %s again: JetStream is reloaded and the journal takes inputs", b.cfg.DataDir)
	}
}

// reloadJetStream stops JetStream and starts it again in process, the
// way nats-server's own config reload restarts a JetStream it disabled
// at run time: every stream and consumer is loaded again from disk,
// without a write error. Clients stay connected; a request under way
// fails or times out, and a consumer fetches again. maxStore > 0 changes
// the store limit, which a running JetStream can only raise.
func (b *Broker) reloadJetStream(maxStore int64) error {
	b.reload.Lock()
	defer b.reload.Unlock()
	if err := b.srv.ShutdownJetStream(); err != nil {
		return fmt.Errorf("broker: stop JetStream: %w", err)
	}
	// A reload that finds JetStream off while its options say on
	// starts it.
	opts := b.opts.Clone()
	if opts.Port == 0 {
		// A random port not picked yet (clients held until Listen):
		// the server reads 0 as its default port, a change it refuses.
		opts.Port = server.RANDOM_PORT
	}
	if maxStore > 0 {
		opts.JetStreamMaxStore = maxStore
	}
	if err := b.srv.ReloadOptions(opts); err != nil {
		return fmt.Errorf("broker: start JetStream: %w", err)
	}
	b.opts = opts
	if !b.srv.JetStreamEnabled() {
		return errors.New("broker: JetStream did not start again (the server's log says why)")
	}
	return nil
}

// logf logs a line of the broker's own.
func (b *Broker) logf(format string, args ...any) {
	switch {
	case b.cfg.Notify != nil:
		b.cfg.Notify(format, args...)
	case b.cfg.Logf != nil:
		b.cfg.Logf(format, args...)
	}
}

// reservedOnDisk is what the file streams kept under dataDir reserve
// (their max_bytes): JetStream loads them with it, and refuses to change
// any stream while the reservations exceed its store limit.
func reservedOnDisk(dataDir string) int64 {
	metas, _ := filepath.Glob(filepath.Join(dataDir, "jetstream", "*", "streams", "*", "meta.inf"))
	var n int64
	for _, m := range metas {
		var cfg struct {
			MaxBytes int64  `json:"max_bytes"`
			Storage  string `json:"storage"`
		}
		if b, err := os.ReadFile(m); err == nil && json.Unmarshal(b, &cfg) == nil && cfg.Storage == "file" && cfg.MaxBytes > 0 {
			n += cfg.MaxBytes
		}
	}
	return n
}
