package journal_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
)

// startBroker runs a real embedded server on dir until the test ends.
func startBroker(tb testing.TB, cfg broker.Config) *broker.Broker {
	tb.Helper()
	cfg.Listen = ""
	if cfg.Sync == "" {
		cfg.Sync = broker.SyncAlways // as a daemon runs
	}
	return lumentest.StartBus(tb, cfg).Broker
}

func newJournal(tb testing.TB) *journal.Journal {
	tb.Helper()
	return journal.New(startBroker(tb, broker.Config{}).JetStream())
}

// testCtx bounds a whole test so a hang fails instead of stalling:
// generously, since a loaded CI machine runs many packages at once; the
// tests assert their own tighter bounds.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mustAppend(t *testing.T, j *journal.Journal, subj string, data string, opts ...journal.AppendOption) uint64 {
	t.Helper()
	seq, err := j.Append(testCtx(t), subj, []byte(data), opts...)
	if err != nil {
		t.Fatalf("Append(%s, %s): %v", subj, data, err)
	}
	return seq
}

func TestAppendMsgID(t *testing.T) {
	j := newJournal(t)
	tests := []struct {
		name    string
		given   []string // message ids, "" for none
		wantSeq []int    // index into given of the append whose seq each returns
	}{
		{name: "duplicate id returns the original", given: []string{"a", "a"}, wantSeq: []int{0, 0}},
		{name: "different ids", given: []string{"b", "c"}, wantSeq: []int{0, 1}},
		{name: "no ids never dedupe", given: []string{"", ""}, wantSeq: []int{0, 1}},
		{name: "id again after others", given: []string{"d", "e", "d", "e"}, wantSeq: []int{0, 1, 0, 1}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			subj := subject.Out(fmt.Sprintf("l%d", i), "state")
			seqs := make([]uint64, len(tt.given))
			for k, id := range tt.given {
				var opts []journal.AppendOption
				if id != "" {
					opts = append(opts, journal.MsgID(subj+":"+id))
				}
				seq, err := j.Append(ctx, subj, []byte(fmt.Sprint(k)), opts...)
				if err != nil {
					t.Fatalf("append %d: %v", k, err)
				}
				seqs[k] = seq
			}
			for k, w := range tt.wantSeq {
				if seqs[k] != seqs[w] {
					t.Fatalf("seqs %v: append %d returned %d, want %d", seqs, k, seqs[k], seqs[w])
				}
			}
			distinct := map[uint64]bool{}
			for _, s := range seqs {
				distinct[s] = true
			}
			if want := len(uniqueInts(tt.wantSeq)); len(distinct) != want {
				t.Fatalf("seqs %v: %d distinct, want %d", seqs, len(distinct), want)
			}
			// Only the originals were stored.
			n := 0
			err := j.Replay(ctx, subj, 0, 0, func(journal.Msg) error { n++; return nil })
			if err != nil || n != len(distinct) {
				t.Fatalf("stored %d messages (err %v), want %d", n, err, len(distinct))
			}
		})
	}
}

func uniqueInts(xs []int) map[int]bool {
	m := map[int]bool{}
	for _, x := range xs {
		m[x] = true
	}
	return m
}

func TestAppendExpect(t *testing.T) {
	j := newJournal(t)
	ctx := testCtx(t)
	a, b := subject.In("a", "fired"), subject.In("b", "fired")
	s1 := mustAppend(t, j, a, "1")
	s2 := mustAppend(t, j, b, "2")

	tests := []struct {
		name     string
		subj     string
		opts     func(last uint64) []journal.AppendOption
		conflict bool
	}{
		{name: "last seq matches", subj: a, opts: func(last uint64) []journal.AppendOption {
			return []journal.AppendOption{journal.ExpectLastSeq(last)}
		}},
		{name: "last seq stale", subj: a, conflict: true, opts: func(last uint64) []journal.AppendOption {
			return []journal.AppendOption{journal.ExpectLastSeq(last - 1)}
		}},
		{name: "last seq zero on a non-empty stream", subj: a, conflict: true, opts: func(uint64) []journal.AppendOption {
			return []journal.AppendOption{journal.ExpectLastSeq(0)}
		}},
		{name: "subject seq matches", subj: b, opts: func(uint64) []journal.AppendOption {
			return []journal.AppendOption{journal.ExpectLastSubjectSeq(s2)}
		}},
		{name: "subject seq stale", subj: a, conflict: true, opts: func(uint64) []journal.AppendOption {
			return []journal.AppendOption{journal.ExpectLastSubjectSeq(s1)} // a moved on above
		}},
		{name: "subject seq zero on a new subject", subj: subject.In("c", "fired"), opts: func(uint64) []journal.AppendOption {
			return []journal.AppendOption{journal.ExpectLastSubjectSeq(0)}
		}},
		{name: "subject seq zero on a used subject", subj: b, conflict: true, opts: func(uint64) []journal.AppendOption {
			return []journal.AppendOption{journal.ExpectLastSubjectSeq(0)}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			last, err := j.LastSeq(ctx)
			if err != nil {
				t.Fatal(err)
			}
			seq, err := j.Append(ctx, tt.subj, []byte("x"), tt.opts(last)...)
			if !tt.conflict {
				if err != nil || seq != last+1 {
					t.Fatalf("Append = %d, %v; want %d, nil", seq, err, last+1)
				}
				return
			}
			if !errors.Is(err, journal.ErrConflict) {
				t.Fatalf("Append = %d, %v; want ErrConflict", seq, err)
			}
			var apiErr *jetstream.APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("%v does not wrap the server's error", err)
			}
			if !strings.HasPrefix(err.Error(), "journal: ") {
				t.Fatalf("error %q lacks the package prefix", err)
			}
			if now, _ := j.LastSeq(ctx); now != last {
				t.Fatalf("a refused append moved the stream from %d to %d", last, now)
			}
		})
	}

	// The stream checks expectations before duplicates: a retry with its
	// now stale expectation conflicts, the same id alone finds the original.
	t.Run("retry of an expected append", func(t *testing.T) {
		last, _ := j.LastSeq(ctx)
		first := mustAppend(t, j, a, "r", journal.MsgID("retry-1"), journal.ExpectLastSeq(last))
		if _, err := j.Append(ctx, a, []byte("r"), journal.MsgID("retry-1"), journal.ExpectLastSeq(last)); !errors.Is(err, journal.ErrConflict) {
			t.Fatalf("retry with expectation = %v, want ErrConflict", err)
		}
		again, err := j.Append(ctx, a, []byte("r"), journal.MsgID("retry-1"))
		if err != nil || again != first {
			t.Fatalf("retry by id = %d, %v; want %d, nil", again, err, first)
		}
	})
}

func TestAppendHeader(t *testing.T) {
	j := newJournal(t)
	subj := subject.Out("kitchen", "state")
	seq := mustAppend(t, j, subj, "{}", journal.Header("Lumen-Cause", "7"), journal.Header("Lumen-Cause", "8"))
	m, err := j.LastMsg(testCtx(t), subj)
	if err != nil {
		t.Fatal(err)
	}
	if m.Seq != seq || strings.Join(m.Header.Values("Lumen-Cause"), ",") != "7,8" {
		t.Fatalf("LastMsg = seq %d header %v", m.Seq, m.Header)
	}
}

func TestAppendAsync(t *testing.T) {
	j := newJournal(t)
	ctx := testCtx(t)
	const n = 2000
	pending := make([]*journal.Pending, n)
	for i := range pending {
		p, err := j.AppendAsync(subject.In("kitchen", "button"), []byte(fmt.Sprint(i)))
		if err != nil {
			t.Fatalf("AppendAsync %d: %v", i, err)
		}
		pending[i] = p
	}
	select {
	case <-j.AsyncComplete():
	case <-ctx.Done():
		t.Fatal("AsyncComplete never closed")
	}
	for i, p := range pending {
		seq, err := p.Wait(ctx)
		if err != nil || seq != uint64(i+1) {
			t.Fatalf("pending %d: %d, %v; want %d", i, seq, err, i+1)
		}
		if again, err := p.Wait(ctx); again != seq || err != nil {
			t.Fatalf("second Wait = %d, %v", again, err)
		}
	}

	tests := []struct {
		name    string
		opts    []journal.AppendOption
		wantSeq uint64
		wantErr error
	}{
		{name: "duplicate id", opts: []journal.AppendOption{journal.MsgID("async-dup")}, wantSeq: n + 1},
		{name: "same id again", opts: []journal.AppendOption{journal.MsgID("async-dup")}, wantSeq: n + 1},
		{name: "conflict", opts: []journal.AppendOption{journal.ExpectLastSeq(1)}, wantErr: journal.ErrConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := j.AppendAsync(subject.In("kitchen", "fired"), []byte("x"), tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			seq, err := p.Wait(ctx)
			if !errors.Is(err, tt.wantErr) || seq != tt.wantSeq {
				t.Fatalf("Wait = %d, %v; want %d, %v", seq, err, tt.wantSeq, tt.wantErr)
			}
		})
	}
}

// TestWriteFailed: an append waiting when the write-error channel closes
// publishes again to learn whether it was stored. A stored event's
// duplicate is acknowledged with its sequence; an event nobody answers
// (nats-server answers no append it could not store; here a subscriber
// that never replies stands in for the stream) fails with ErrDiskFull
// and Room's sentence within about a second, not at its context's end.
func TestWriteFailed(t *testing.T) {
	b := startBroker(t, broker.Config{})
	nc, err := b.Connect()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	const silent = "silent.append"
	if _, err := nc.Subscribe(silent, func(*nats.Msg) {}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	const full = "the disk is full (test)"
	room := func() error { return errors.New(full) }
	stored := subject.In("kitchen", "fired")
	first := mustAppend(t, journal.New(b.JetStream()), stored, "x", journal.MsgID("wf-stored"))

	tests := []struct {
		name    string
		subj    string
		async   bool
		known   bool // the write error is known before the append
		wantSeq uint64
		wantErr error
	}{
		{name: "stored", subj: stored, known: true, wantSeq: first},
		{name: "stored, async", subj: stored, async: true, known: true, wantSeq: first},
		{name: "not stored", subj: silent, wantErr: journal.ErrDiskFull},
		{name: "not stored, async", subj: silent, async: true, wantErr: journal.ErrDiskFull},
		{name: "not stored, known", subj: silent, known: true, wantErr: journal.ErrDiskFull},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			failed := make(chan struct{})
			j := journal.New(b.JetStream(), journal.WithRoom(room),
				journal.WithWriteFailed(func() <-chan struct{} { return failed }))
			if tt.known {
				close(failed)
			} else {
				time.AfterFunc(50*time.Millisecond, func() { close(failed) })
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			start := time.Now()
			var seq uint64
			if tt.async {
				var p *journal.Pending
				if p, err = j.AppendAsync(tt.subj, []byte("x"), journal.MsgID("wf-stored")); err == nil {
					seq, err = p.Wait(ctx)
				}
			} else {
				seq, err = j.Append(ctx, tt.subj, []byte("x"), journal.MsgID("wf-stored"))
			}
			if seq != tt.wantSeq || !errors.Is(err, tt.wantErr) {
				t.Fatalf("= %d, %v; want %d, %v", seq, err, tt.wantSeq, tt.wantErr)
			}
			if err != nil && err.Error() != full {
				t.Errorf("error %q, want Room's sentence %q", err, full)
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("took %v: waited for the context, not for the write error", took)
			}
		})
	}
}

// fill appends n events cycling over kitchen in, kitchen out, hall in, hall
// out, so event seq has subject kinds[(seq-1)%4].
var kinds = []string{
	subject.In("kitchen", "button"),
	subject.Out("kitchen", "state"),
	subject.In("hall", "timer"),
	subject.Out("hall", "state"),
}

func fill(t *testing.T, j *journal.Journal, n int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		mustAppend(t, j, kinds[(i-1)%len(kinds)], fmt.Sprintf("event %d", i), journal.Header("N", fmt.Sprint(i)))
	}
}

func TestReplay(t *testing.T) {
	const n = 40
	b := startBroker(t, broker.Config{})
	j := journal.New(b.JetStream())

	// An empty stream returns at once.
	calls := 0
	if err := j.Replay(testCtx(t), "", 0, 0, func(journal.Msg) error { calls++; return nil }); err != nil || calls != 0 {
		t.Fatalf("Replay on an empty stream: %d calls, %v", calls, err)
	}

	fill(t, j, n)
	kitchenIn := func(seq uint64) bool { return (seq-1)%4 == 0 }
	kitchen := func(seq uint64) bool { return (seq-1)%4 < 2 }
	outputs := func(seq uint64) bool { return (seq-1)%2 == 1 }
	all := func(uint64) bool { return true }
	none := func(uint64) bool { return false }

	tests := []struct {
		name     string
		filter   string
		from, to uint64
		want     func(seq uint64) bool
		wantLast uint64 // highest seq considered
	}{
		{name: "everything", filter: "", want: all, wantLast: n},
		{name: "all events filter", filter: subject.AllEvents, want: all, wantLast: n},
		{name: "one light's inputs", filter: subject.AllIn("kitchen"), want: kitchenIn, wantLast: n},
		{name: "one light", filter: subject.Events("kitchen"), want: kitchen, wantLast: n},
		{name: "every output", filter: "lumen.*.evt.out.>", want: outputs, wantLast: n},
		{name: "middle range", filter: subject.AllIn("kitchen"), from: 10, to: 30, want: kitchenIn, wantLast: 30},
		{name: "range ends between matches", filter: subject.AllIn("kitchen"), from: 1, to: 7, want: kitchenIn, wantLast: 7},
		{name: "single event", filter: "", from: 17, to: 17, want: all, wantLast: 17},
		{name: "to beyond the end", filter: subject.Events("hall"), from: 35, to: 1000, want: func(s uint64) bool { return !kitchen(s) }, wantLast: n},
		{name: "no match in range", filter: subject.AllIn("kitchen"), from: 2, to: 4, want: none, wantLast: 4},
		{name: "no such subject", filter: subject.Events("attic"), want: none, wantLast: n},
		{name: "from after the end", filter: "", from: n + 1, want: none, wantLast: n},
		{name: "to before from", filter: "", from: 20, to: 10, want: none, wantLast: n},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []uint64
			err := j.Replay(testCtx(t), tt.filter, tt.from, tt.to, func(m journal.Msg) error {
				if want := fmt.Sprintf("event %d", m.Seq); string(m.Data) != want || m.Header.Get("N") != fmt.Sprint(m.Seq) {
					return fmt.Errorf("seq %d carries %q, header %v", m.Seq, m.Data, m.Header)
				}
				if m.Subject != kinds[(m.Seq-1)%4] || m.Time.IsZero() {
					return fmt.Errorf("seq %d: subject %s, time %v", m.Seq, m.Subject, m.Time)
				}
				got = append(got, m.Seq)
				return nil
			})
			if err != nil {
				t.Fatalf("Replay: %v", err)
			}
			var want []uint64
			for s := max(tt.from, 1); s <= tt.wantLast; s++ {
				if tt.want(s) {
					want = append(want, s)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("replayed %v, want %v", got, want)
			}
		})
	}

	t.Run("callback error stops", func(t *testing.T) {
		stop := errors.New("stop here")
		var got []uint64
		err := j.Replay(testCtx(t), "", 0, 0, func(m journal.Msg) error {
			got = append(got, m.Seq)
			if m.Seq == 3 {
				return stop
			}
			return nil
		})
		if !errors.Is(err, stop) || fmt.Sprint(got) != "[1 2 3]" {
			t.Fatalf("Replay = %v after %v", err, got)
		}
	})

	t.Run("ignores events appended meanwhile", func(t *testing.T) {
		count := 0
		err := j.Replay(testCtx(t), "", 0, 0, func(m journal.Msg) error {
			if m.Seq == 1 {
				mustAppend(t, j, kinds[0], fmt.Sprintf("event %d", n+1), journal.Header("N", fmt.Sprint(n+1)))
			}
			count++
			return nil
		})
		if err != nil || count != n {
			t.Fatalf("Replay = %v after %d events, want %d", err, count, n)
		}
	})

	t.Run("replay consumers are removed", func(t *testing.T) {
		ctx := testCtx(t)
		str, err := b.JetStream().Stream(ctx, subject.Stream)
		if err != nil {
			t.Fatal(err)
		}
		info, err := str.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Consumers != 0 {
			t.Fatalf("%d consumers left behind", info.State.Consumers)
		}
	})

	t.Run("canceled context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := j.Replay(ctx, "", 0, 0, func(journal.Msg) error { return nil }); !errors.Is(err, context.Canceled) {
			t.Fatalf("Replay = %v, want context.Canceled", err)
		}
	})
}

func TestConsumerResume(t *testing.T) {
	dir := t.TempDir()
	b := startBroker(t, broker.Config{DataDir: dir})
	j := journal.New(b.JetStream())
	ctx := testCtx(t)
	for i := 1; i <= 6; i++ {
		mustAppend(t, j, subject.In("kitchen", "button"), fmt.Sprint(i))
		mustAppend(t, j, subject.Out("kitchen", "state"), "out") // filtered away
	}
	const durable = "light-kitchen"
	filter := subject.AllIn("kitchen")

	next := func(t *testing.T, c *journal.Consumer, wantData string, wantDelivered uint64, ack bool) {
		t.Helper()
		began := time.Now()
		m, a, err := c.Next(ctx)
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		if string(m.Data) != wantData || m.NumDelivered != wantDelivered || m.Subject != subject.In("kitchen", "button") {
			t.Fatalf("Next = %s %q delivered %d; want %q delivered %d", m.Subject, m.Data, m.NumDelivered, wantData, wantDelivered)
		}
		if d := time.Since(began); d > 5*time.Second {
			t.Fatalf("Next took %v: waited for AckWait instead of resuming", d)
		}
		if ack {
			if err := a.Ack(ctx); err != nil {
				t.Fatalf("Ack: %v", err)
			}
		}
	}

	c, err := j.Consumer(ctx, durable, filter)
	if err != nil {
		t.Fatal(err)
	}
	next(t, c, "1", 1, true)
	next(t, c, "2", 1, true)
	next(t, c, "3", 1, false)
	// One event in flight: the next one waits for the ack.
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	if m, _, err := c.Next(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second in-flight Next = %q, %v; want a timeout", m.Data, err)
	}
	cancel()
	c.Stop()
	if _, _, err := c.Next(ctx); !errors.Is(err, journal.ErrClosed) {
		t.Fatalf("Next after Stop = %v, want ErrClosed", err)
	}

	// A new owner resumes at the first unacknowledged event.
	c, err = j.Consumer(ctx, durable, filter)
	if err != nil {
		t.Fatal(err)
	}
	next(t, c, "3", 1, true) // the rewind restarts the delivery count
	next(t, c, "4", 1, false)

	// So does one after the whole server went down with 4 unacked.
	b.Shutdown()
	b = startBroker(t, broker.Config{DataDir: dir})
	j = journal.New(b.JetStream())
	c, err = j.Consumer(ctx, durable, filter)
	if err != nil {
		t.Fatal(err)
	}
	next(t, c, "4", 1, true)
	next(t, c, "5", 1, true)
	c.Stop()

	// After retention purged acknowledged inputs, a new owner still
	// resumes at the first unacknowledged one.
	if err := j.Purge(ctx, filter, 9); err != nil { // inputs 1-4 are seqs 1 3 5 7
		t.Fatal(err)
	}
	c, err = j.Consumer(ctx, durable, filter)
	if err != nil {
		t.Fatal(err)
	}
	next(t, c, "6", 1, false)
	c.Stop()

	if err := j.DeleteConsumer(ctx, durable); err != nil {
		t.Fatalf("DeleteConsumer: %v", err)
	}
	if err := j.DeleteConsumer(ctx, durable); !errors.Is(err, journal.ErrNotFound) {
		t.Fatalf("second DeleteConsumer = %v, want ErrNotFound", err)
	}
	// A fresh consumer of that name starts over at the first event kept.
	c, err = j.Consumer(ctx, durable, filter)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	next(t, c, "5", 1, true)
}

func TestConsumerOptions(t *testing.T) {
	j := newJournal(t)
	ctx := testCtx(t)
	for i := 1; i <= 3; i++ {
		mustAppend(t, j, subject.In("hall", "button"), fmt.Sprint(i))
	}
	c, err := j.Consumer(ctx, "hall", subject.AllIn("hall"), journal.MaxAckPending(3), journal.AckWait(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	// Three in flight without acks.
	var ackers []journal.Acker
	for i := 1; i <= 3; i++ {
		m, a, err := c.Next(ctx)
		if err != nil || string(m.Data) != fmt.Sprint(i) {
			t.Fatalf("Next %d = %q, %v", i, m.Data, err)
		}
		ackers = append(ackers, a)
	}
	if err := ackers[0].InProgress(); err != nil {
		t.Fatal(err)
	}
	for _, a := range ackers[:2] {
		if err := a.Ack(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if err := ackers[2].Nak(0); err != nil {
		t.Fatal(err)
	}
	m, a, err := c.Next(ctx)
	if err != nil || string(m.Data) != "3" || m.NumDelivered != 2 {
		t.Fatalf("after Nak: %q delivered %d, %v", m.Data, m.NumDelivered, err)
	}
	if err := a.Ack(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestLastMsg(t *testing.T) {
	j := newJournal(t)
	s1 := mustAppend(t, j, subject.In("kitchen", "button"), "in")
	s2 := mustAppend(t, j, subject.Out("kitchen", "state"), "red")
	s3 := mustAppend(t, j, subject.In("hall", "button"), "hall")
	tests := []struct {
		name     string
		given    string
		wantSeq  uint64
		notFound bool
	}{
		{name: "literal", given: subject.In("kitchen", "button"), wantSeq: s1},
		{name: "light's outputs", given: subject.AllOut("kitchen"), wantSeq: s2},
		{name: "light's events", given: subject.Events("kitchen"), wantSeq: s2},
		{name: "star", given: "lumen.*.evt.in.button", wantSeq: s3},
		{name: "every event", given: subject.AllEvents, wantSeq: s3},
		{name: "none literal", given: subject.In("attic", "button"), notFound: true},
		{name: "none wildcard", given: subject.Events("attic"), notFound: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := j.LastMsg(testCtx(t), tt.given)
			if tt.notFound {
				if !errors.Is(err, journal.ErrNotFound) {
					t.Fatalf("LastMsg = %+v, %v; want ErrNotFound", m, err)
				}
				return
			}
			if err != nil || m.Seq != tt.wantSeq || m.Time.IsZero() {
				t.Fatalf("LastMsg = %+v, %v; want seq %d", m, err, tt.wantSeq)
			}
		})
	}
}

func TestSnapshots(t *testing.T) {
	j := newJournal(t)
	ctx := testCtx(t)
	if _, err := j.LoadSnapshot(ctx, "kitchen"); !errors.Is(err, journal.ErrNotFound) {
		t.Fatalf("LoadSnapshot before any save = %v, want ErrNotFound", err)
	}
	if _, err := j.SnapshotTime(ctx, "kitchen"); !errors.Is(err, journal.ErrNotFound) {
		t.Fatalf("SnapshotTime before any save = %v, want ErrNotFound", err)
	}
	tests := []struct {
		name    string
		light   string
		data    []byte
		wantErr bool
	}{
		{name: "first", light: "kitchen", data: []byte(`{"seq":10}`)},
		{name: "replaces", light: "kitchen", data: []byte(`{"seq":20}`)},
		{name: "other light", light: "hall", data: []byte(`{"seq":5}`)},
		{name: "large", light: "big", data: bytes.Repeat([]byte("x"), 512<<10)},
		{name: "invalid light", light: "Kitchen", data: []byte("{}"), wantErr: true},
		{name: "reserved light", light: "fleet", data: []byte("{}"), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := j.SaveSnapshot(ctx, tt.light, tt.data)
			if tt.wantErr {
				if err == nil {
					t.Fatal("SaveSnapshot succeeded")
				}
				return
			}
			if err != nil {
				t.Fatalf("SaveSnapshot: %v", err)
			}
			got, err := j.LoadSnapshot(ctx, tt.light)
			if err != nil || !bytes.Equal(got, tt.data) {
				t.Fatalf("LoadSnapshot = %d bytes, %v", len(got), err)
			}
			// Saved just now, by the server's clock.
			if at, err := j.SnapshotTime(ctx, tt.light); err != nil || time.Since(at).Abs() > time.Minute {
				t.Fatalf("SnapshotTime = %v, %v; want about now", at, err)
			}
		})
	}
}

func TestPurge(t *testing.T) {
	j := newJournal(t)
	ctx := testCtx(t)
	fill(t, j, 20) // kitchen has 10 events, hall 10

	bytes0, msgs0, err := j.Size(ctx)
	if err != nil || msgs0 != 20 || bytes0 == 0 {
		t.Fatalf("Size = %d bytes, %d msgs, %v", bytes0, msgs0, err)
	}
	tests := []struct {
		name     string
		filter   string
		keepFrom uint64
		wantMsgs uint64
	}{
		{name: "keepFrom 0 purges nothing", filter: subject.Events("kitchen"), keepFrom: 0, wantMsgs: 20},
		{name: "keepFrom 1 purges nothing", filter: subject.Events("kitchen"), keepFrom: 1, wantMsgs: 20},
		{name: "kitchen below 11", filter: subject.Events("kitchen"), keepFrom: 11, wantMsgs: 14}, // 1 2 5 6 9 10
		{name: "again is a no-op", filter: subject.Events("kitchen"), keepFrom: 11, wantMsgs: 14},
		{name: "hall inputs below 16", filter: subject.AllIn("hall"), keepFrom: 16, wantMsgs: 10}, // 3 7 11 15
		{name: "everything below 19", filter: "", keepFrom: 19, wantMsgs: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := j.Purge(ctx, tt.filter, tt.keepFrom); err != nil {
				t.Fatalf("Purge: %v", err)
			}
			_, msgs, err := j.Size(ctx)
			if err != nil || msgs != tt.wantMsgs {
				t.Fatalf("after purge %d msgs, %v; want %d", msgs, err, tt.wantMsgs)
			}
		})
	}
	var left []uint64
	if err := j.Replay(ctx, "", 0, 0, func(m journal.Msg) error { left = append(left, m.Seq); return nil }); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(left) != "[19 20]" {
		t.Fatalf("left %v", left)
	}
	if last, err := j.LastSeq(ctx); err != nil || last != 20 {
		t.Fatalf("LastSeq = %d, %v; purging keeps the sequence", last, err)
	}
}

func TestFullThenPurge(t *testing.T) {
	b := startBroker(t, broker.Config{MaxBytes: 8 << 10})
	j := journal.New(b.JetStream())
	ctx := testCtx(t)
	payload := bytes.Repeat([]byte("x"), 200)
	var last uint64
	var err error
	for i := 0; i < 1000; i++ {
		var seq uint64
		seq, err = j.Append(ctx, subject.In("kitchen", "data"), payload)
		if err != nil {
			break
		}
		last = seq
	}
	if !errors.Is(err, journal.ErrFull) {
		t.Fatalf("append past the budget = %v, want ErrFull", err)
	}
	if last < 10 {
		t.Fatalf("only %d events fit in 8 KiB", last)
	}
	// Nothing was dropped to make room.
	if _, msgs, _ := j.Size(ctx); msgs != last {
		t.Fatalf("%d events kept of %d appended", msgs, last)
	}
	if err := j.Purge(ctx, subject.Events("kitchen"), last/2); err != nil {
		t.Fatal(err)
	}
	if _, err := j.Append(ctx, subject.In("kitchen", "data"), payload); err != nil {
		t.Fatalf("append after purge: %v", err)
	}
}

func TestMissingStream(t *testing.T) {
	b := startBroker(t, broker.Config{})
	j := journal.New(b.JetStream(), journal.WithStream("NOPE"), journal.WithSnapshotBucket("NOPE"))
	ctx := testCtx(t)
	if _, err := j.LastSeq(ctx); !errors.Is(err, journal.ErrNotFound) {
		t.Fatalf("LastSeq = %v, want ErrNotFound", err)
	}
	if _, err := j.LoadSnapshot(ctx, "kitchen"); !errors.Is(err, journal.ErrNotFound) {
		t.Fatalf("LoadSnapshot = %v, want ErrNotFound", err)
	}
}

func TestConsumerBatchAckAllStartAt(t *testing.T) {
	j := newJournal(t)
	ctx := testCtx(t)
	var seqs []uint64
	for i := 1; i <= 8; i++ {
		seqs = append(seqs, mustAppend(t, j, subject.In("porch", "button"), fmt.Sprint(i)))
		mustAppend(t, j, subject.Out("porch", "state"), "out") // filtered away
	}
	const durable = "light-porch"
	filter := subject.AllIn("porch")
	c, err := j.Consumer(ctx, durable, filter, journal.MaxAckPending(5), journal.AckAll())
	if err != nil {
		t.Fatal(err)
	}
	// Wait until the five the server may deliver have arrived.
	var got []journal.Delivery
	deadline := time.Now().Add(10 * time.Second)
	for len(got) < 5 && time.Now().Before(deadline) {
		if got, err = c.Batch(ctx, 10, got); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 5 {
		t.Fatalf("batch of %d events, want the 5 MaxAckPending allows", len(got))
	}
	for i, d := range got {
		if d.Seq != seqs[i] || string(d.Data) != fmt.Sprint(i+1) {
			t.Fatalf("event %d = seq %d %q, want seq %d %q", i, d.Seq, d.Data, seqs[i], fmt.Sprint(i+1))
		}
	}
	// One ack of the last settles all five, so the other three arrive.
	if err := got[4].Ack(ctx); err != nil {
		t.Fatal(err)
	}
	got, err = c.Batch(ctx, 2, got[:0])
	if err != nil || len(got) == 0 || got[0].Seq != seqs[5] {
		t.Fatalf("after AckAll: %d events, first %+v, %v", len(got), got, err)
	}
	if len(got) > 2 {
		t.Fatalf("Batch returned %d events, more than max 2", len(got))
	}
	c.Stop()
	if _, err := c.Batch(ctx, 2, nil); !errors.Is(err, journal.ErrClosed) {
		t.Fatalf("Batch after Stop = %v, want ErrClosed", err)
	}

	// An owner that knows its position from the journal starts there,
	// whatever the consumer had acknowledged.
	c, err = j.Consumer(ctx, durable, filter, journal.MaxAckPending(5), journal.AckAll(), journal.StartAt(seqs[2]))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	m, _, err := c.Next(ctx)
	if err != nil || m.Seq != seqs[2] || m.NumDelivered != 1 {
		t.Fatalf("StartAt(%d): next = seq %d delivered %d, %v", seqs[2], m.Seq, m.NumDelivered, err)
	}
}

func TestRecords(t *testing.T) {
	j := newJournal(t)
	ctx := testCtx(t)
	if got, err := j.Records(ctx, "agent.kitchen."); err != nil || len(got) != 0 {
		t.Fatalf("Records before any save = %v, %v", got, err)
	}
	if err := j.SaveRecord(ctx, "kitchen", []byte("{}")); err == nil {
		t.Fatal("a record may not take a light's snapshot key")
	}
	for key, v := range map[string]string{"agent.kitchen.default": "1", "agent.kitchen.s-2": "2", "agent.hall.default": "3"} {
		if err := j.SaveRecord(ctx, key, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.SaveRecord(ctx, "agent.kitchen.default", []byte("4")); err != nil {
		t.Fatal(err)
	}
	got, err := j.Records(ctx, "agent.kitchen.")
	if err != nil || len(got) != 2 || string(got["agent.kitchen.default"]) != "4" || string(got["agent.kitchen.s-2"]) != "2" {
		t.Fatalf("Records = %q, %v", got, err)
	}
	if err := j.SaveSnapshot(ctx, "kitchen", []byte("snap")); err != nil {
		t.Fatal(err)
	}
	if b, err := j.LoadSnapshot(ctx, "kitchen"); err != nil || string(b) != "snap" {
		t.Fatalf("the light's snapshot: %q %v", b, err)
	}
}

// A follower gets the history, is told when it has caught up, then gets
// each new event live, until its context ends.
func TestFollow(t *testing.T) {
	j := newJournal(t)
	ctx := testCtx(t)
	state := subject.Out("kitchen", "state")
	for i := 1; i <= 3; i++ {
		mustAppend(t, j, state, fmt.Sprint(i))
		mustAppend(t, j, subject.Out("hall", "state"), "other light")
	}
	type ev struct {
		data     string
		caughtUp bool
	}
	got := make(chan ev, 16)
	fctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- j.Follow(fctx, state, 0, func(m journal.Msg) error {
			got <- ev{data: string(m.Data)}
			return nil
		}, func() { got <- ev{caughtUp: true} })
	}()
	want := []ev{{data: "1"}, {data: "2"}, {data: "3"}, {caughtUp: true}}
	for _, w := range want {
		if g := <-got; g != w {
			t.Fatalf("got %+v, want %+v", g, w)
		}
	}
	mustAppend(t, j, state, "live")
	if g := <-got; g != (ev{data: "live"}) {
		t.Fatalf("live: got %+v", g)
	}
	stop()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Follow after its context ended = %v", err)
	}
	select {
	case g := <-got:
		t.Fatalf("caught up twice, or an extra event: %+v", g)
	default:
	}

	// Nothing to catch up with: told at once. An error from fn ends it.
	boom := errors.New("boom")
	var told bool
	err := j.Follow(ctx, subject.Out("nowhere", "state"), 0, func(journal.Msg) error { return boom }, func() {
		told = true
		mustAppend(t, j, subject.Out("nowhere", "state"), "x")
	})
	if !told || !errors.Is(err, boom) {
		t.Fatalf("empty history: told %v, err %v", told, err)
	}
}

func TestSeqAt(t *testing.T) {
	j := newJournal(t)
	ctx := testCtx(t)
	state := subject.Out("kitchen", "state")
	mustAppend(t, j, state, "old")
	mustAppend(t, j, subject.Out("hall", "state"), "other light")
	// Just after the stream stored event 2: the times are the stream's,
	// so no wait is needed to fall between two events.
	second, err := j.LastMsg(ctx, ">")
	if err != nil || second.Seq != 2 {
		t.Fatalf("event 2: %+v, %v", second, err)
	}
	mid := second.Time.Add(time.Nanosecond)
	mustAppend(t, j, subject.Out("hall", "state"), "other light, later")
	mustAppend(t, j, state, "new")
	for _, tc := range []struct {
		filter string
		at     time.Time
		want   uint64
	}{
		{state, time.Time{}, 1},
		{state, mid, 4},
		{"", mid, 3},
		{state, time.Now().Add(time.Hour), 5}, // none yet: the next one
	} {
		if got, err := j.SeqAt(ctx, tc.filter, tc.at); err != nil || got != tc.want {
			t.Errorf("SeqAt(%q, %v) = %d, %v; want %d", tc.filter, tc.at, got, err, tc.want)
		}
	}
}
