package journal_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
)

// clientsConfig is two accounts as the daemon and its outside clients
// have them (issue 27): LUMEN holds the streams; CLIENTS reaches them
// only through the read-only JetStream API it imports for each stream,
// and, when wake, the events' subjects. No consumer can be made from
// CLIENTS.
func clientsConfig(wake bool, streams ...string) string {
	services := []string{"$JS.API.INFO", "$JS.API.STREAM.NAMES", "$JS.API.STREAM.LIST"}
	var streamed []string
	for _, s := range streams {
		services = append(services, "$JS.API.STREAM.INFO."+s, "$JS.API.STREAM.MSG.GET."+s)
		streamed = append(streamed, "$JS.API.DIRECT.GET."+s, "$JS.API.DIRECT.GET."+s+".>")
	}
	var exports, imports []string
	for _, s := range services {
		exports = append(exports, fmt.Sprintf("{service: %q}", s))
		imports = append(imports, fmt.Sprintf("{service: {account: LUMEN, subject: %q}}", s))
	}
	for _, s := range streamed {
		// A batched direct get answers with many messages.
		exports = append(exports, fmt.Sprintf("{service: %q, response_type: stream}", s))
		imports = append(imports, fmt.Sprintf("{service: {account: LUMEN, subject: %q}}", s))
	}
	if wake {
		exports = append(exports, fmt.Sprintf("{stream: %q}", subject.AllEvents))
		imports = append(imports, fmt.Sprintf("{stream: {account: LUMEN, subject: %q}}", subject.AllEvents))
	}
	return fmt.Sprintf(`accounts {
	LUMEN: { jetstream: enabled, users: [{user: daemon, password: d}], exports: [%s] }
	CLIENTS: { users: [{user: client, password: c}], imports: [%s] }
}`, strings.Join(exports, ", "), strings.Join(imports, ", "))
}

// startAccounts runs a real server with the accounts of clientsConfig
// until the test ends, and returns its URL.
func startAccounts(tb testing.TB, wake bool, streams ...string) string {
	tb.Helper()
	opts := &server.Options{}
	if err := opts.ProcessConfigString(clientsConfig(wake, streams...)); err != nil {
		tb.Fatal(err)
	}
	opts.Host, opts.Port = "127.0.0.1", -1
	opts.JetStream, opts.StoreDir = true, tb.TempDir()
	opts.NoLog, opts.NoSigs = true, true
	s, err := server.NewServer(opts)
	if err != nil {
		tb.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		tb.Fatal("nats-server did not start")
	}
	tb.Cleanup(s.Shutdown)
	return s.ClientURL()
}

// connectAs returns JetStream as user (daemon: LUMEN, client: CLIENTS).
func connectAs(tb testing.TB, url, user, password string) jetstream.JetStream {
	tb.Helper()
	nc, err := nats.Connect(url, nats.UserInfo(user, password))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		tb.Fatal(err)
	}
	return js
}

// clients is the journal as the daemon writes it (w, in LUMEN) and as a
// client reads it (r, in CLIENTS).
type clients struct {
	w, r     *journal.Journal
	wjs, rjs jetstream.JetStream
}

func newClients(t *testing.T, wake bool) clients {
	t.Helper()
	url := startAccounts(t, wake, subject.Stream)
	c := clients{wjs: connectAs(t, url, "daemon", "d"), rjs: connectAs(t, url, "client", "c")}
	if err := broker.EnsureStreams(testCtx(t), c.wjs, 0, nil); err != nil {
		t.Fatal(err)
	}
	c.w, c.r = journal.New(c.wjs), journal.New(c.rjs)
	return c
}

// A client in another account reads the journal with what it imports:
// ranges, filters, batches, large events, the last message, the lights,
// sizes and times; and creates no consumer (it could not).
func TestClientRead(t *testing.T) {
	c := newClients(t, true)
	w, r := c.w, c.r
	ctx := testCtx(t)

	// An empty stream: nothing, at once.
	calls := 0
	if err := r.Replay(ctx, "", 0, 0, func(journal.Msg) error { calls++; return nil }); err != nil || calls != 0 {
		t.Fatalf("Replay of an empty stream: %d calls, %v", calls, err)
	}
	if seq, err := r.SeqAt(ctx, "", time.Time{}); err != nil || seq != 1 {
		t.Fatalf("SeqAt of an empty stream = %d, %v; want 1", seq, err)
	}

	// More than two batches of small events, with headers on some.
	const n = 12_000
	for i := 1; i <= n; i++ {
		var opts []journal.AppendOption
		if i%3 == 0 {
			opts = append(opts, journal.Header("N", fmt.Sprint(i)))
		}
		if _, err := w.AppendAsync(kinds[(i-1)%len(kinds)], fmt.Appendf(nil, "event %d", i), opts...); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-w.AsyncComplete():
	case <-ctx.Done():
		t.Fatal("appends not acknowledged")
	}
	// Just after the stream stored the last small event: the times are
	// the stream's, so no wait is needed to fall between two events.
	lastSmall, err := w.LastMsg(ctx, ">")
	if err != nil || lastSmall.Seq != n {
		t.Fatalf("the last small event: %+v, %v", lastSmall, err)
	}
	mid := lastSmall.Time.Add(time.Nanosecond)
	// Then large events: a few per batch at most.
	big := bytes.Repeat([]byte("b"), 900_000)
	const nBig = 10
	for i := range nBig {
		big[0] = byte('0' + i)
		mustAppend(t, w, subject.In("attic", "upload"), string(big))
	}
	last := uint64(n + nBig)

	kitchenIn := func(seq uint64) bool { return seq <= n && (seq-1)%4 == 0 }
	kitchen := func(seq uint64) bool { return seq <= n && (seq-1)%4 < 2 }
	small := func(seq uint64) bool { return seq <= n }
	attic := func(seq uint64) bool { return seq > n }
	all := func(uint64) bool { return true }
	none := func(uint64) bool { return false }
	tests := []struct {
		name     string
		filter   string
		from, to uint64
		want     func(seq uint64) bool
		wantLast uint64 // highest seq considered
	}{
		{name: "everything", want: all, wantLast: last},
		{name: "one light's inputs", filter: subject.AllIn("kitchen"), want: kitchenIn, wantLast: last},
		{name: "one light", filter: subject.Events("kitchen"), want: kitchen, wantLast: last},
		{name: "across batches", filter: "lumen.*.evt.in.>", from: 4000, to: 11_000, want: func(s uint64) bool { return (s-1)%2 == 0 }, wantLast: 11_000},
		{name: "small events up to the end", filter: subject.AllEvents, from: n - 10, to: n, want: small, wantLast: n},
		{name: "large events", filter: subject.Events("attic"), want: attic, wantLast: last},
		{name: "large events from the middle", from: n + 4, want: attic, wantLast: last},
		{name: "range ends between matches", filter: subject.AllIn("kitchen"), from: 1, to: 7, want: kitchenIn, wantLast: 7},
		{name: "single event", from: 17, to: 17, want: all, wantLast: 17},
		{name: "single event not matching", filter: subject.AllIn("hall"), from: 17, to: 17, want: none, wantLast: 17},
		{name: "no match in range", filter: subject.AllIn("kitchen"), from: 2, to: 4, want: none, wantLast: 4},
		{name: "no such subject", filter: subject.Events("cellar"), want: none, wantLast: last},
		{name: "from after the end", from: last + 1, want: none, wantLast: last},
		{name: "to before from", from: 20, to: 10, want: none, wantLast: last},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []uint64
			err := r.Replay(testCtx(t), tt.filter, tt.from, tt.to, func(m journal.Msg) error {
				if err := checkEvent(m, n, big); err != nil {
					return err
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
			if len(got) != len(want) || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("replayed %d events (%.80v...), want %d (%.80v...)", len(got), fmt.Sprint(got), len(want), fmt.Sprint(want))
			}
		})
	}

	t.Run("callback error stops", func(t *testing.T) {
		stop := errors.New("stop here")
		var got []uint64
		err := r.Replay(testCtx(t), "", 0, 0, func(m journal.Msg) error {
			got = append(got, m.Seq)
			if m.Seq == 3 {
				return stop
			}
			return nil
		})
		if err != stop || fmt.Sprint(got) != "[1 2 3]" {
			t.Fatalf("Replay = %v after %v", err, got)
		}
	})

	t.Run("canceled context", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		n := 0
		err := r.Replay(cctx, "", 0, 0, func(journal.Msg) error {
			if n++; n == 10 {
				cancel()
			}
			return nil
		})
		if !errors.Is(err, context.Canceled) || n != 10 {
			t.Fatalf("Replay = %v after %d events, want context.Canceled after 10", err, n)
		}
	})

	t.Run("last message", func(t *testing.T) {
		for _, tc := range []struct {
			given   string
			want    uint64
			missing bool
		}{
			{given: subject.AllIn("kitchen"), want: n - 3},
			{given: subject.Out("hall", "state"), want: n},
			{given: subject.AllEvents, want: last},
			{given: subject.In("cellar", "button"), missing: true},
			{given: subject.Events("cellar"), missing: true},
		} {
			m, err := r.LastMsg(ctx, tc.given)
			switch {
			case tc.missing && !errors.Is(err, journal.ErrNotFound):
				t.Errorf("LastMsg(%s) = %d, %v; want ErrNotFound", tc.given, m.Seq, err)
			case !tc.missing && (err != nil || m.Seq != tc.want || checkEvent(m, n, big) != nil):
				t.Errorf("LastMsg(%s) = %d, %v; want %d", tc.given, m.Seq, err, tc.want)
			}
		}
	})

	t.Run("where a time starts", func(t *testing.T) {
		for _, tc := range []struct {
			filter string
			at     time.Time
			want   uint64
		}{
			{"", time.Time{}, 1},
			{subject.AllIn("hall"), time.Time{}, 3},
			{"", mid, n + 1},
			{subject.Events("kitchen"), mid, last + 1}, // none since: the next
			{"", time.Now().Add(time.Hour), last + 1},
		} {
			if got, err := r.SeqAt(ctx, tc.filter, tc.at); err != nil || got != tc.want {
				t.Errorf("SeqAt(%q, %v) = %d, %v; want %d", tc.filter, tc.at, got, err, tc.want)
			}
		}
	})

	t.Run("lights, size and sequences", func(t *testing.T) {
		lights, err := r.Lights(ctx)
		if err != nil || strings.Join(lights, ",") != "attic,hall,kitchen" {
			t.Errorf("Lights = %v, %v", lights, err)
		}
		bytes, msgs, err := r.Size(ctx)
		if err != nil || msgs != last || bytes < nBig*uint64(len(big)) {
			t.Errorf("Size = %d bytes, %d messages, %v", bytes, msgs, err)
		}
		first, err := r.FirstSeq(ctx)
		if err != nil || first != 1 {
			t.Errorf("FirstSeq = %d, %v", first, err)
		}
		if got, err := r.LastSeq(ctx); err != nil || got != last {
			t.Errorf("LastSeq = %d, %v", got, err)
		}
	})

	t.Run("no consumer was made", func(t *testing.T) {
		str, err := c.wjs.Stream(ctx, subject.Stream)
		if err != nil {
			t.Fatal(err)
		}
		if c := str.CachedInfo().State.Consumers; c != 0 {
			t.Fatalf("%d consumers", c)
		}
	})

	t.Run("a stream not imported", func(t *testing.T) {
		other := journal.New(c.rjs, journal.WithStream("ELSEWHERE"))
		if _, err := other.LastSeq(ctx); !errors.Is(err, journal.ErrNotFound) {
			t.Errorf("LastSeq = %v, want ErrNotFound", err)
		}
	})
}

// checkEvent checks m is the event TestClientRead appended at its
// sequence.
func checkEvent(m journal.Msg, n int, big []byte) error {
	if m.Time.IsZero() {
		return fmt.Errorf("seq %d has no time", m.Seq)
	}
	if m.Seq > uint64(n) {
		if m.Subject != subject.In("attic", "upload") || len(m.Data) != len(big) || m.Data[0] != byte('0'+m.Seq-uint64(n)-1) || m.Header != nil {
			return fmt.Errorf("seq %d: subject %s, %d bytes starting %q, header %v", m.Seq, m.Subject, len(m.Data), m.Data[:1], m.Header)
		}
		return nil
	}
	if want := fmt.Sprintf("event %d", m.Seq); string(m.Data) != want || m.Subject != kinds[(m.Seq-1)%4] {
		return fmt.Errorf("seq %d: %s carries %q", m.Seq, m.Subject, m.Data)
	}
	if wantN := m.Seq%3 == 0; wantN != (m.Header.Get("N") == fmt.Sprint(m.Seq)) || !wantN && m.Header != nil || wantN && len(m.Header) != 1 {
		return fmt.Errorf("seq %d: header %v", m.Seq, m.Header)
	}
	return nil
}

// A client follows the journal: the history, told when caught up, then
// every event appended while it follows, each once, in order, with
// wake-ups and (when it may not subscribe the events) by polling alone;
// until its context ends.
func TestClientFollow(t *testing.T) {
	for _, tc := range []struct {
		name string
		wake bool
	}{
		{"woken", true},
		{"polling", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClients(t, tc.wake)
			w, r := c.w, c.r
			ctx := testCtx(t)
			state := subject.Out("kitchen", "state")
			const before, live = 7000, 3000
			for i := 1; i <= before; i++ {
				if _, err := w.AppendAsync(kinds[(i-1)%len(kinds)], fmt.Appendf(nil, "%d", i)); err != nil {
					t.Fatal(err)
				}
			}
			<-w.AsyncComplete()

			type ev struct {
				seq      uint64
				caughtUp bool
			}
			got := make(chan ev, before+live+10)
			fctx, stop := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				done <- r.Follow(fctx, state, 2, func(m journal.Msg) error {
					if m.Subject != state || string(m.Data) != fmt.Sprint(m.Seq) {
						return fmt.Errorf("seq %d: %s %q", m.Seq, m.Subject, m.Data)
					}
					got <- ev{seq: m.Seq}
					return nil
				}, func() { got <- ev{caughtUp: true} })
			}()
			next := uint64(2) // kitchen's outputs: 2, 6, 10, ...
			take := func(want ev) {
				t.Helper()
				select {
				case g := <-got:
					if g != want {
						t.Fatalf("got %+v, want %+v", g, want)
					}
				case err := <-done:
					t.Fatalf("Follow ended: %v", err)
				case <-ctx.Done():
					t.Fatalf("waiting for %+v: %v", want, ctx.Err())
				}
			}
			for ; next <= before; next += 4 {
				take(ev{seq: next})
			}
			take(ev{caughtUp: true})
			// Live: appended in bursts of 500, each acknowledged before
			// the next, while it reads.
			go func() {
				for i := before + 1; i <= before+live; i++ {
					if _, err := w.AppendAsync(kinds[(i-1)%len(kinds)], fmt.Appendf(nil, "%d", i)); err != nil {
						t.Error(err)
						return
					}
					if i%500 == 0 {
						<-w.AsyncComplete()
					}
				}
			}()
			for ; next <= before+live; next += 4 {
				take(ev{seq: next})
			}
			// One more, alone: it comes at once when woken, within a poll
			// when not.
			start := time.Now()
			mustAppend(t, w, state, fmt.Sprint(before+live+1))
			take(ev{seq: before + live + 1})
			if d := time.Since(start); tc.wake && d > 500*time.Millisecond || d > 3*time.Second {
				t.Errorf("a live event took %v", d)
			}
			stop()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("Follow after its context ended = %v", err)
			}
			select {
			case g := <-got:
				t.Fatalf("an extra event or a second caught-up: %+v", g)
			default:
			}
		})
	}
}

// Reading ahead guesses where the next batch starts from how many
// sequences the last spanned: a filter whose matches thin out and thicken
// again, and gaps purged inside the range, make it guess short and long;
// every event is still read once, in order.
func TestClientReadAhead(t *testing.T) {
	c := newClients(t, true)
	ctx := testCtx(t)
	kitchen, hall := subject.In("kitchen", "button"), subject.In("hall", "button")
	var subjects []string // by sequence - 1
	add := func(n, every int) {
		for i := range n {
			subj := hall
			if i%every == 0 {
				subj = kitchen
			}
			subjects = append(subjects, subj)
			if _, err := c.w.AppendAsync(subj, []byte("x")); err != nil {
				t.Fatal(err)
			}
		}
	}
	add(8000, 1)   // dense
	add(22000, 20) // sparse
	add(10000, 1)  // dense again
	<-c.w.AsyncComplete()
	// Hall's events below 20000 go: holes in the middle of the stream.
	const purgedBelow = 20000
	if err := c.w.Purge(ctx, hall, purgedBelow); err != nil {
		t.Fatal(err)
	}
	want := func(filter string, from, to uint64) []uint64 {
		var seqs []uint64
		for i, subj := range subjects {
			seq := uint64(i + 1)
			if seq < from || to != 0 && seq > to || subj == hall && seq < purgedBelow || filter != "" && !journal.Matches(filter, subj) {
				continue
			}
			seqs = append(seqs, seq)
		}
		return seqs
	}
	for _, tc := range []struct {
		filter   string
		from, to uint64
	}{
		{"", 0, 0},
		{subject.Events("kitchen"), 0, 0},
		{subject.Events("kitchen"), 7000, 33000},
		{subject.Events("hall"), 0, 0},
		{subject.Events("hall"), 19_000, 21_000},
	} {
		var got []uint64
		err := c.r.Replay(ctx, tc.filter, tc.from, tc.to, func(m journal.Msg) error {
			got = append(got, m.Seq)
			return nil
		})
		if w := want(tc.filter, tc.from, tc.to); err != nil || fmt.Sprint(got) != fmt.Sprint(w) {
			t.Errorf("Replay(%q, %d, %d): %d events, %v; want %d", tc.filter, tc.from, tc.to, len(got), err, len(w))
		}
	}

	// Follow reads ahead while it catches up, then reads on from where
	// it is: an answer read ahead and not needed is not taken for the
	// next read's.
	seqs := make(chan uint64, 2*len(subjects))
	fctx, stop := context.WithCancel(ctx)
	caughtUp, burst := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	stored := uint64(len(subjects))
	go func() {
		done <- c.r.Follow(fctx, subject.Events("kitchen"), 0, func(m journal.Msg) error {
			if m.Seq > stored {
				<-burst // the live events pile up meanwhile
			}
			seqs <- m.Seq
			return nil
		}, func() { close(caughtUp) })
	}()
	select {
	case <-caughtUp:
	case err := <-done:
		t.Fatalf("Follow ended: %v", err)
	}
	// More than two batches at once: the rounds that read them read
	// ahead again, on the slot whose unneeded answer is still owed.
	add(12_000, 1)
	<-c.w.AsyncComplete()
	close(burst)
	for i, w := range want(subject.Events("kitchen"), 0, 0) {
		select {
		case got := <-seqs:
			if got != w {
				t.Fatalf("Follow: event %d is %d, want %d", i, got, w)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("Follow: no event %d (%d)", i, w)
		}
	}
	stop()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Follow = %v", err)
	}
	select {
	case got := <-seqs:
		t.Fatalf("Follow: an extra event %d", got)
	default:
	}
}
