package agent

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/agent/agenttest"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
)

// okLight answers every command of the light as done; the light itself
// is exercised by the end-to-end tests.
type okLight struct{}

func (okLight) Command(_ context.Context, verb string, _ []byte) ([]byte, error) {
	if verb == messages.VerbGet {
		return json.Marshal(messages.GetReply{OK: true, Light: "k", State: "off", States: []messages.State{{Name: "off"}}, Vars: map[string]json.RawMessage{}})
	}
	return []byte(`{"ok":true,"state":"off"}`), nil
}

// markRig is a light's agent over a real JetStream journal and the
// scripted model.
type markRig struct {
	t   testing.TB
	j   *journal.Journal
	js  *broker.Broker
	srv *agenttest.Server
	sys *actor.ActorSystem
	cfg Config

	mu     sync.Mutex
	rounds []uint64 // the mark after each round
}

func newMarkRig(t testing.TB, script ...agenttest.Step) *markRig {
	t.Helper()
	b := lumentest.StartBus(t, broker.Config{})
	srv := agenttest.New(script...)
	t.Cleanup(srv.Close)
	r := &markRig{t: t, j: b.Journal, js: b.Broker, srv: srv, sys: actor.NewActorSystem()}
	r.cfg = Config{Light: "k", Journal: r.j, Tools: &Tools{Light: okLight{}}, Logf: t.Logf, CallTimeout: time.Minute, MarkEvery: 20 * time.Millisecond,
		Model: NewOpenAI(ModelConfig{BaseURL: srv.BaseURL(), Model: "scripted", MaxRetries: -1})}
	r.cfg.markHook = func(seq uint64) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.rounds = append(r.rounds, seq)
	}
	return r
}

func (r *markRig) start() *actor.PID {
	r.t.Helper()
	props, err := Props(r.cfg)
	if err != nil {
		r.t.Fatal(err)
	}
	return r.sys.Root.Spawn(props)
}

// stop stops the agent and checks no round of its marker outlives it.
func (r *markRig) stop(pid *actor.PID) {
	r.t.Helper()
	if err := r.sys.Root.StopFuture(pid).Wait(); err != nil {
		r.t.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	if stacks := string(buf[:runtime.Stack(buf, true)]); strings.Contains(stacks, "(*Manager).markRound") {
		r.t.Fatalf("a mark round outlives its agent:\n%s", stacks)
	}
}

// askAsync asks and returns where the reply comes.
func (r *markRig) askAsync(pid *actor.PID, session, text string) <-chan any {
	ch := make(chan any, 1)
	r.sys.Root.Send(pid, &Ask{Req: messages.AskRequest{Text: text, Session: session, Who: "test"}, Reply: func(v any) { ch <- v }})
	return ch
}

func (r *markRig) reply(ch <-chan any) *messages.AskReply {
	r.t.Helper()
	select {
	case v := <-ch:
		a, ok := v.(*messages.AskReply)
		if !ok {
			r.t.Fatalf("reply %+v", v)
		}
		return a
	case <-time.After(30 * time.Second):
		r.t.Fatal("no reply")
		return nil
	}
}

// sessions lists the agent's sessions by name.
func (r *markRig) sessions(pid *actor.PID) map[string]messages.SessionInfo {
	ch := make(chan any, 1)
	r.sys.Root.Send(pid, &ListSessions{Reply: func(v any) { ch <- v }})
	out := map[string]messages.SessionInfo{}
	if rep, ok := (<-ch).(*messages.SessionsReply); ok {
		for _, s := range rep.Sessions {
			out[s.Session] = s
		}
	}
	return out
}

// mark is the light's mark, 0 when there is none.
func (r *markRig) mark() uint64 {
	r.t.Helper()
	b, err := r.j.Record(context.Background(), MarkKey("k"))
	if errors.Is(err, journal.ErrNotFound) {
		return 0
	}
	if err != nil {
		r.t.Fatal(err)
	}
	seq, err := decodeMark(b)
	if err != nil {
		r.t.Fatal(err)
	}
	return seq
}

func (r *markRig) last() uint64 {
	r.t.Helper()
	seq, err := r.j.LastSeq(context.Background())
	if err != nil {
		r.t.Fatal(err)
	}
	return seq
}

// waitRounds waits until n more rounds have ended.
func (r *markRig) waitRounds(n int) {
	r.t.Helper()
	r.mu.Lock()
	want := len(r.rounds) + n
	r.mu.Unlock()
	lumentest.WaitFor(r.t, 30*time.Second, "mark rounds", func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return len(r.rounds) >= want
	})
}

// stays checks that the mark stays where it is, behind the journal's end,
// for a few rounds.
func (r *markRig) stays(why string) {
	r.t.Helper()
	before := r.mark()
	r.waitRounds(3)
	if got, last := r.mark(), r.last(); got != before || got >= last {
		r.t.Fatalf("%s: mark %d (was %d), journal's last %d", why, got, before, last)
	}
}

func (r *markRig) catchesUp() {
	r.t.Helper()
	lumentest.WaitFor(r.t, 30*time.Second, "the mark to reach the journal's end", func() bool { return r.mark() == r.last() })
}

// appendSteps journals a session's events, as a daemon killed before
// saving the session would have left them.
func (r *markRig) appendSteps(session string, evs ...messages.OutAgentData) {
	r.t.Helper()
	for _, ev := range evs {
		ev.Session = session
		env, err := messages.AgentStep("k", ev, time.Now().UTC())
		if err != nil {
			r.t.Fatal(err)
		}
		if _, err := r.j.Append(context.Background(), subject.Out("k", messages.OutAgent), messages.AppendEnvelope(nil, &env), journal.MsgID(env.ID)); err != nil {
			r.t.Fatal(err)
		}
	}
}

// agentSeqs are the sequences of the light's agent events.
func (r *markRig) agentSeqs() []uint64 {
	r.t.Helper()
	var seqs []uint64
	if err := r.j.Replay(context.Background(), subject.Out("k", messages.OutAgent), 0, 0, func(m journal.Msg) error {
		seqs = append(seqs, m.Seq)
		return nil
	}); err != nil {
		r.t.Fatal(err)
	}
	return seqs
}

func done(msg string) []agenttest.Call {
	return []agenttest.Call{{Name: ToolDone, Args: `{"message":"` + msg + `"}`}}
}

// The mark moves on to the journal's end while every session is idle,
// and waits while a request runs or an approval is pending.
func TestMarkMovesOnWhenIdle(t *testing.T) {
	called, release := make(chan struct{}, 1), make(chan struct{})
	r := newMarkRig(t,
		agenttest.Step{Calls: done("hello")},
		agenttest.Step{Func: func(agenttest.ChatRequest) agenttest.Step {
			called <- struct{}{}
			<-release
			return agenttest.Step{Calls: done("slow")}
		}},
		agenttest.Step{Calls: []agenttest.Call{{Name: ToolDeleteState, Args: `{"name":"off"}`}}},
		agenttest.Step{Calls: done("deleted")},
	)
	pid := r.start()
	if got := r.mark(); got != 0 {
		t.Fatalf("mark %d of an empty journal", got)
	}
	if a := r.reply(r.askAsync(pid, "one", "hi")); a.Status != messages.AgentDone {
		t.Fatalf("reply %+v", a)
	}
	r.catchesUp()

	slow := r.askAsync(pid, "one", "slow")
	<-called
	r.stays("a request runs")
	close(release)
	if a := r.reply(slow); a.Answer != "slow" {
		t.Fatalf("reply %+v", a)
	}
	r.catchesUp()

	pending := r.askAsync(pid, "two", "delete off")
	lumentest.WaitFor(t, 30*time.Second, "the approval", func() bool { return r.sessions(pid)["two"].Pending != nil })
	r.stays("an approval is pending")
	decided := make(chan any, 1)
	r.sys.Root.Send(pid, &Decide{Approve: true, Reply: func(v any) { decided <- v }})
	if v := <-decided; v.(*messages.ApprovalReply).Decision != "approved" {
		t.Fatalf("decision %+v", v)
	}
	if a := r.reply(pending); a.Answer != "deleted" {
		t.Fatalf("reply %+v", a)
	}
	r.catchesUp()
	r.stop(pid)
	if err := r.srv.Err(); err != nil {
		t.Fatal(err)
	}
}

// A session is idle only when its saved snapshot has every step it
// journaled and nothing may journal more.
func TestSessionIdle(t *testing.T) {
	for _, tc := range []struct {
		name    string
		running int
		due     bool
		saved   int
		saving  bool
		idle    bool
	}{
		{name: "saved", saved: 7, idle: true},
		{name: "a request runs", running: 1, saved: 7},
		{name: "a snapshot is due", due: true, saved: 7},
		{name: "the snapshot is behind", saved: 6},
		{name: "a snapshot is being saved", saved: 7, saving: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &session{view: &State{ID: "a", Step: 7}, snaps: &snapshots{id: "a", last: tc.saved}, running: tc.running}
			if tc.due {
				s.due = time.AfterFunc(time.Hour, func() {})
				defer s.due.Stop()
			}
			if tc.saving {
				s.snaps.mu.Lock()
				defer s.snaps.mu.Unlock()
			}
			if got := s.idle(); got != tc.idle {
				t.Fatalf("idle %v, want %v", got, tc.idle)
			}
		})
	}
}

// encoded is every session's state as its JSON, to compare restores.
func encoded(t *testing.T, states map[string]*State) map[string]string {
	t.Helper()
	out := map[string]string{}
	for id, st := range states {
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		out[id] = string(b)
	}
	return out
}

// A start reads only the events after the mark, and restores exactly the
// sessions reading every event restores: one saved and moved on since, one
// pending an approval, one that lives only in events.
func TestMarkRestoresTheSameSessions(t *testing.T) {
	r := newMarkRig(t,
		agenttest.Step{Calls: done("hello")},
		agenttest.Step{Calls: []agenttest.Call{{Name: ToolDeleteState, Args: `{"name":"off"}`}}},
	)
	ctx := context.Background()
	pid := r.start()
	if a := r.reply(r.askAsync(pid, "one", "hi")); a.Status != messages.AgentDone {
		t.Fatalf("reply %+v", a)
	}
	r.catchesUp()
	r.askAsync(pid, "two", "delete off")
	lumentest.WaitFor(t, 30*time.Second, "the approval", func() bool { return r.sessions(pid)["two"].Pending != nil })
	r.stop(pid)

	// Killed later, before saving: "one" moved on, "three" is new.
	b, err := r.j.Record(ctx, SnapshotKey("k", "one"))
	if err != nil {
		t.Fatal(err)
	}
	var one State
	if err := json.Unmarshal(b, &one); err != nil {
		t.Fatal(err)
	}
	r.appendSteps("one",
		messages.OutAgentData{Step: one.Step + 1, Kind: messages.AgentKindAsk, Text: "again", Who: "test"},
		messages.OutAgentData{Step: one.Step + 2, Kind: messages.AgentKindEnd, Status: messages.AgentDone, Text: "again done"})
	r.appendSteps("three",
		messages.OutAgentData{Step: 1, Kind: messages.AgentKindAsk, Text: "three", Who: "test"},
		messages.OutAgentData{Step: 2, Kind: messages.AgentKindModel, Message: &messages.AgentMessage{Role: "assistant", Content: "thinking"}})

	mark, last, seqs := r.mark(), r.last(), r.agentSeqs()
	after := 0
	for _, s := range seqs {
		if s > mark {
			after++
		}
	}
	if mark == 0 || after == 0 || after == len(seqs) {
		t.Fatalf("mark %d: %d of %d agent events after it", mark, after, len(seqs))
	}
	recs, err := r.j.Records(ctx, SnapshotKey("k", ""))
	if err != nil {
		t.Fatal(err)
	}

	m := &Manager{cfg: r.cfg}
	got, err := m.restore()
	if err != nil {
		t.Fatal(err)
	}
	if got.from != mark+1 || got.events != after || got.mark != last {
		t.Fatalf("restore read %d events from %d, mark %d; want %d from %d, mark %d", got.events, got.from, got.mark, after, mark+1, last)
	}
	for id, st := range got.states {
		if got.saved[id] != st.Step {
			t.Errorf("session %s at step %d, saved at %d", id, st.Step, got.saved[id])
		}
	}

	// The data dir as it was, without a mark: every event is read.
	keys, err := r.j.RecordKeys(ctx, SnapshotKey("k", ""))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range keys {
		if err := r.j.DeleteRecord(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	for key, b := range recs {
		if err := r.j.SaveRecord(ctx, key, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.j.DeleteRecord(ctx, MarkKey("k")); err != nil {
		t.Fatal(err)
	}
	want, err := m.restore()
	if err != nil {
		t.Fatal(err)
	}
	if want.from != 1 || want.events != len(seqs) || want.mark != last {
		t.Fatalf("restore without a mark read %d events from %d, mark %d", want.events, want.from, want.mark)
	}
	if g, w := encoded(t, got.states), encoded(t, want.states); !maps.Equal(g, w) {
		t.Fatalf("restored with the mark:\n%v\nwithout:\n%v", g, w)
	}
	if ids := slices.Sorted(maps.Keys(want.states)); !slices.Equal(ids, []string{"one", "three", "two"}) {
		t.Fatalf("sessions %v", ids)
	}
	if s := want.states["one"]; s.Step != one.Step+2 || s.LastAnswer != "again done" {
		t.Errorf("one: %+v", s)
	}
	if s := want.states["two"]; s.Pending == nil || s.Status != messages.AgentPending {
		t.Errorf("two: %+v", s)
	}
	if s := want.states["three"]; s.Step != 2 || s.Status != messages.AgentRunning {
		t.Errorf("three: %+v", s)
	}

	// Saved, the next start reads nothing.
	again, err := m.restore()
	if err != nil {
		t.Fatal(err)
	}
	if again.from != last+1 || again.events != 0 {
		t.Fatalf("restore after a restore read %d events from %d", again.events, again.from)
	}
	if g, w := encoded(t, again.states), encoded(t, want.states); !maps.Equal(g, w) {
		t.Fatalf("restored again:\n%v\nfirst:\n%v", g, w)
	}

	// Through a copy the sequences are the origins': every event is read
	// and no mark is written.
	cm := &Manager{cfg: r.cfg}
	cm.cfg.Journal = journal.New(r.js.JetStream(), journal.WithOrigin(func(_ string, h nats.Header) (uint64, bool) {
		return 1, true
	}))
	if err := r.j.DeleteRecord(ctx, MarkKey("k")); err != nil {
		t.Fatal(err)
	}
	copied, err := cm.restore()
	if err != nil {
		t.Fatal(err)
	}
	if copied.marking || copied.events != len(seqs) || r.mark() != 0 {
		t.Fatalf("restore through a copy read %d events, marking %v, mark %d", copied.events, copied.marking, r.mark())
	}
	if g, w := encoded(t, copied.states), encoded(t, want.states); !maps.Equal(g, w) {
		t.Fatalf("restored through a copy:\n%v\nfirst:\n%v", g, w)
	}
}

// A mark that cannot be trusted is ignored: the start reads every event.
func TestReadMark(t *testing.T) {
	r := newMarkRig(t)
	r.appendSteps("a", messages.OutAgentData{Step: 1, Kind: messages.AgentKindAsk, Text: "x"})
	r.appendSteps("a", messages.OutAgentData{Step: 2, Kind: messages.AgentKindEnd, Status: messages.AgentDone})
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		record string // "" none
		want   uint64
	}{
		{name: "none", want: 0},
		{name: "one", record: `{"seq":1}`, want: 1},
		{name: "at the end", record: `{"seq":2}`, want: 2},
		{name: "past the end", record: `{"seq":3}`, want: 0},
		{name: "not JSON", record: `seq=1`, want: 0},
		{name: "no seq", record: `{}`, want: 0},
		{name: "not a number", record: `{"seq":"1"}`, want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := r.j.DeleteRecord(ctx, MarkKey("k")); err != nil {
				t.Fatal(err)
			}
			if tc.record != "" {
				if err := r.j.SaveRecord(ctx, MarkKey("k"), []byte(tc.record)); err != nil {
					t.Fatal(err)
				}
			}
			m := &Manager{cfg: r.cfg}
			if got := m.readMark(ctx, 2); got != tc.want {
				t.Fatalf("mark %d, want %d", got, tc.want)
			}
		})
	}
	// The sessions' listing never meets the mark.
	keys, err := r.j.RecordKeys(ctx, SnapshotKey("k", ""))
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 0 {
		t.Fatalf("session records %v", keys)
	}
}

// A mark the journal's retention has passed reads from the journal's
// first event.
func TestMarkBeforeThePurged(t *testing.T) {
	r := newMarkRig(t)
	ctx := context.Background()
	r.appendSteps("a", messages.OutAgentData{Step: 1, Kind: messages.AgentKindAsk, Text: "x"})
	if err := r.j.SaveRecord(ctx, MarkKey("k"), encodeMark(1)); err != nil {
		t.Fatal(err)
	}
	r.appendSteps("a",
		messages.OutAgentData{Step: 2, Kind: messages.AgentKindModel, Message: &messages.AgentMessage{Role: "assistant", Content: "y"}},
		messages.OutAgentData{Step: 3, Kind: messages.AgentKindEnd, Status: messages.AgentDone, Text: "z"})
	if err := r.j.Purge(ctx, "", 3); err != nil {
		t.Fatal(err)
	}
	m := &Manager{cfg: r.cfg}
	got, err := m.restore()
	if err != nil {
		t.Fatal(err)
	}
	// Without a snapshot, what was purged is lost (the session starts at
	// its first event left); the mark only says where reading begins.
	if got.from != 2 || got.events != 1 || got.mark != 3 || got.states["a"].Step != 3 || got.states["a"].LastAnswer != "z" {
		t.Fatalf("restore read %d events from %d, mark %d: %+v", got.events, got.from, got.mark, got.states["a"])
	}
}
