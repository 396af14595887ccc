package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
)

// The security probe of issue 27 ("a bus no client can subvert"), attack
// by attack, against the real `lumen up` and the real nats CLI. Every
// attack is made by an outside client both ways a client can log in:
// anonymous on loopback, and as the --user of lumen up. The daemon's
// streams are in an account of their own; a client reaches them only
// through what that account exports, so each attack must be refused
// and leave the journal, the snapshots and the light's replies as they
// were, and the journal must still replay.

// secMode is one way an outside client logs in.
type secMode struct {
	name     string
	up       []string // more flags of lumen up
	user, pw string
}

func secModes() []secMode {
	return []secMode{
		{name: "anonymous"},
		{name: "user", up: []string{"--user", "mallory", "--password", "s3cret-27-pass"}, user: "mallory", pw: "s3cret-27-pass"},
	}
}

// secEachMode runs f once per way of logging in, the two in parallel.
func secEachMode(t *testing.T, f func(t *testing.T, m secMode)) {
	t.Helper()
	for _, m := range secModes() {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			f(t, m)
		})
	}
}

// secBus is a daemon and an outside client of it.
type secBus struct {
	mode secMode
	d    *daemon
	url  string // with the credentials, for lumen and nats.go
	nc   *natsgo.Conn
	js   jetstream.JetStream
}

func startSecBus(t *testing.T, m secMode, args ...string) *secBus {
	t.Helper()
	d := startDaemon(t, t.TempDir(), append(args, m.up...)...)
	b := &secBus{mode: m, d: d, url: d.URL}
	if m.user != "" {
		b.url = strings.Replace(d.URL, "nats://", "nats://"+m.user+":"+m.pw+"@", 1)
	}
	b.nc = b.connect(t)
	js, err := jetstream.New(b.nc)
	if err != nil {
		t.Fatal(err)
	}
	b.js = js
	return b
}

// connect opens another client connection; opts add to the credentials.
func (b *secBus) connect(t *testing.T, opts ...natsgo.Option) *natsgo.Conn {
	t.Helper()
	if b.mode.user != "" {
		opts = append(opts, natsgo.UserInfo(b.mode.user, b.mode.pw))
	}
	nc, err := natsgo.Connect(b.d.URL, opts...)
	if err != nil {
		t.Fatalf("connect as a client (%s): %v", b.mode.name, err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// nats runs the real nats CLI as the client, bounded by a deadline so
// that a command that waits forever fails instead of hanging the test.
func (b *secBus) nats(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return b.natsIn(t, false, args...)
}

// natsTTY is nats with a terminal (script(1)): some commands (stream
// view) refuse to run without one before they reach the server.
func (b *secBus) natsTTY(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return b.natsIn(t, true, args...)
}

func (b *secBus) natsIn(t *testing.T, tty bool, args ...string) (string, error) {
	t.Helper()
	bin := os.Getenv("NATS_BIN")
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("NATS_BIN is not set; run the tests with the Taskfile")
		}
		t.Skip("NATS_BIN not set (the Taskfile builds the real nats CLI)")
	}
	full := []string{"--server", b.d.URL, "--timeout", "3s"}
	if b.mode.user != "" {
		full = append(full, "--user", b.mode.user, "--password", b.mode.pw)
	}
	full = append(full, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var cmd *exec.Cmd
	if tty {
		script, err := exec.LookPath("script")
		if err != nil {
			t.Skip("no script(1) to give the nats CLI a terminal")
		}
		line := shellQuote(append([]string{bin}, full...))
		cmd = exec.CommandContext(ctx, script, "-q", "-e", "-c", line, "/dev/null")
	} else {
		cmd = exec.CommandContext(ctx, bin, full...)
	}
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "NATS_URL=", "NATS_USER=", "NATS_PASSWORD=")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("nats %s did not end within 30s (a hang, not a refusal):\n%s", strings.Join(args, " "), out)
	}
	return string(out), err
}

func shellQuote(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// lumen runs the lumen CLI as the client.
func (b *secBus) lumen(t *testing.T, args ...string) (string, int) {
	t.Helper()
	return runCLI(t, b.url, args...)
}

// secJournal is what a client can see of the daemon's JetStream: enough
// to tell that nothing was written, created or consumed.
type secJournal struct {
	Msgs, LastSeq uint64
	Store         uint64 // bytes of every stream, the snapshots' too
	Streams       int
	Consumers     int
	Names         []string
}

func (b *secBus) journal(t *testing.T) secJournal {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := b.js.Stream(ctx, "LUMEN")
	if err != nil {
		t.Fatalf("stream info LUMEN as a client: %v", err)
	}
	st := s.CachedInfo().State
	ai, err := b.js.AccountInfo(ctx)
	if err != nil {
		t.Fatalf("$JS.API.INFO as a client: %v", err)
	}
	var names []string
	l := b.js.StreamNames(ctx)
	for n := range l.Name() {
		names = append(names, n)
	}
	if err := l.Err(); err != nil {
		t.Fatalf("$JS.API.STREAM.NAMES as a client: %v", err)
	}
	slices.Sort(names)
	return secJournal{Msgs: st.Msgs, LastSeq: st.LastSeq, Store: ai.Store, Streams: ai.Streams, Consumers: ai.Consumers, Names: names}
}

// settled waits until the journal stops changing (the daemon's own
// writes after a command) and returns it.
func (b *secBus) settled(t *testing.T) secJournal {
	t.Helper()
	prev := b.journal(t)
	for i := 0; i < 50; i++ {
		time.Sleep(200 * time.Millisecond)
		cur := b.journal(t)
		if fmt.Sprint(cur) == fmt.Sprint(prev) {
			return cur
		}
		prev = cur
	}
	t.Fatalf("the journal did not settle: %+v", prev)
	return prev
}

// get is the light's whole model, as any client asks it.
func (b *secBus) get(t *testing.T, light string) reply {
	t.Helper()
	return mustOK(t, request(t, b.nc, "lumen."+light+".cmd.get", `{}`))
}

// msg reads one journal record as a client (direct get).
func (b *secBus) msg(t *testing.T, seq uint64) *jetstream.RawStreamMsg {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := b.js.Stream(ctx, "LUMEN")
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.GetMsg(ctx, seq)
	if err != nil {
		t.Fatalf("get LUMEN #%d as a client: %v", seq, err)
	}
	return m
}

// inputs counts the journaled inputs on subj (a filter).
func (b *secBus) inputs(t *testing.T, filter string) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := b.js.Stream(ctx, "LUMEN")
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(filter))
	if err != nil {
		t.Fatalf("stream info LUMEN, subjects %s: %v", filter, err)
	}
	var n uint64
	for _, c := range info.State.Subjects {
		n += c
	}
	return n
}

// stopAndVerify replays the light's journal as a client, then stops the
// daemon and replays it from the data directory, from the first event
// and from the snapshot: every recorded output must be what the light
// computes again.
func (b *secBus) stopAndVerify(t *testing.T, light string) {
	t.Helper()
	// As a client first, which reads the journal without a consumer.
	if out, code := b.lumen(t, "replay", "--light", light, "--verify", "--quiet"); code != 0 || !strings.Contains(out, "every recorded output matches") {
		t.Errorf("lumen replay --verify as a client: exit %d\n%s", code, out)
	}
	if err := b.d.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, extra := range [][]string{nil, {"--from-snapshot"}} {
		args := append([]string{"replay", "--data", b.d.Data, "--light", light, "--verify", "--quiet"}, extra...)
		out, code := runCLI(t, "", args...)
		if code != 0 || !strings.Contains(out, "every recorded output matches") {
			t.Errorf("lumen %s: exit %d\n%s", strings.Join(args, " "), code, out)
		}
	}
}

// permissionErrors collects a connection's asynchronous errors (the
// server's permission violations).
type permissionErrors struct {
	mu   sync.Mutex
	errs []string
}

func (p *permissionErrors) handler(_ *natsgo.Conn, _ *natsgo.Subscription, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.errs = append(p.errs, err.Error())
}

// waitFor waits for a violation naming subj.
func (p *permissionErrors) waitFor(subj string, d time.Duration) bool {
	return lumentest.Within(d, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, e := range p.errs {
			if strings.Contains(strings.ToLower(e), "permissions violation for subscription") && strings.Contains(e, subj) {
				return true
			}
		}
		return false
	})
}

// refused reports whether the nats CLI failed as a refusal does: an
// error exit, or for nats req (which exits 0) a "No responders" line.
func refused(out string, err error) bool {
	if strings.Contains(out, "No responders") {
		return true
	}
	return err != nil && strings.Contains(out, "error")
}

// Attacks 1 and 2 of the probe: a client cannot make, restore or edit a
// stream, nor make a consumer, in the daemon's account, whatever it
// would capture or republish to; it can read the history.
func TestSecurityJetStreamAdmin(t *testing.T) {
	secEachMode(t, func(t *testing.T, m secMode) {
		b := startSecBus(t, m)
		mustOK(t, request(t, b.nc, "lumen.demo.cmd.fire", `{"transition":"button_click"}`))
		before := b.settled(t)
		getBefore := b.get(t, "demo").Raw
		if want := []string{"KV_LUMEN_SNAP", "LUMEN"}; !slices.Equal(before.Names, want) {
			t.Fatalf("streams a client sees: %v, want %v", before.Names, want)
		}
		// Whatever a stream made here would republish, a watcher would
		// see on the light's events.
		watch := b.connect(t)
		events := make(chan *natsgo.Msg, 1024)
		if _, err := watch.ChanSubscribe("lumen.demo.evt.>", events); err != nil {
			t.Fatal(err)
		}
		if err := watch.Flush(); err != nil {
			t.Fatal(err)
		}

		evil := func(name, subjects, src, dest string) string {
			cfg := map[string]any{"name": name, "subjects": []string{subjects}, "retention": "limits", "storage": "file", "num_replicas": 1}
			if dest != "" {
				cfg["republish"] = map[string]any{"src": src, "dest": dest}
			}
			j, _ := json.Marshal(cfg)
			return string(j)
		}
		restore := fmt.Sprintf(`{"config":%s}`, evil("EVIL", "evil.>", "evil.>", "lumen.demo.evt.out.>"))

		// The raw JetStream API, with nats.go: no one answers.
		for _, req := range []struct{ subj, body string }{
			{"$JS.API.STREAM.RESTORE.EVIL", restore},
			{"$JS.API.STREAM.CREATE.EVIL", evil("EVIL", "evil.>", "evil.>", "lumen.demo.evt.out.>")},
			{"$JS.API.STREAM.CREATE.EVIL2", evil("EVIL2", "lumen.demo.cmd.>", "", "")},
			{"$JS.API.STREAM.CREATE.EVIL3", evil("EVIL3", "evil3.>", "evil3.>", "$KV.LUMEN_SNAP.>")},
			{"$JS.API.STREAM.UPDATE.LUMEN", evil("LUMEN", "lumen.demo.evt.>", "lumen.demo.evt.>", "$KV.LUMEN_SNAP.demo")},
			{"$JS.API.STREAM.UPDATE.KV_LUMEN_SNAP", evil("KV_LUMEN_SNAP", "$KV.LUMEN_SNAP.>", "$KV.LUMEN_SNAP.>", "lumen.demo.evt.out.zz")},
			{"$JS.API.CONSUMER.CREATE.LUMEN.evil", `{"stream_name":"LUMEN","config":{"name":"evil","deliver_subject":"$KV.LUMEN_SNAP.demo","ack_policy":"none"}}`},
			{"$JS.API.CONSUMER.CREATE.KV_LUMEN_SNAP.evil", `{"stream_name":"KV_LUMEN_SNAP","config":{"name":"evil","deliver_subject":"lumen.demo.evt.out.zz","ack_policy":"none"}}`},
			{"$JS.API.CONSUMER.DURABLE.CREATE.LUMEN.evil", `{"stream_name":"LUMEN","config":{"durable_name":"evil","ack_policy":"explicit"}}`},
		} {
			rep, err := b.nc.Request(req.subj, []byte(req.body), 3*time.Second)
			if err == nil {
				t.Errorf("%s: answered %s", req.subj, rep.Data)
			} else if err != natsgo.ErrNoResponders {
				t.Errorf("%s: %v, want no responders", req.subj, err)
			}
		}

		// The same with the real nats CLI.
		bk := t.TempDir()
		if err := os.WriteFile(filepath.Join(bk, "backup.json"), []byte(restore), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bk, "stream.tar.s2"), []byte("not a snapshot"), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"req", "$JS.API.STREAM.RESTORE.EVIL", restore},
			{"stream", "restore", bk},
			{"stream", "add", "EVIL", "--subjects", "evil.>", "--republish-source", "evil.>", "--republish-destination", "lumen.demo.evt.out.>", "--defaults"},
			{"stream", "add", "EVIL2", "--subjects", "lumen.demo.cmd.>,_INBOX.>", "--defaults"},
			{"stream", "add", "EVIL3", "--subjects", "evil3.>", "--republish-source", "evil3.>", "--republish-destination", "$KV.LUMEN_SNAP.>", "--defaults"},
			{"stream", "edit", "LUMEN", "--republish-source", "lumen.demo.evt.>", "--republish-destination", "$KV.LUMEN_SNAP.demo", "-f"},
			{"consumer", "add", "LUMEN", "evilc", "--target", "$KV.LUMEN_SNAP.demo", "--defaults", "--deliver", "all"},
			{"consumer", "add", "KV_LUMEN_SNAP", "evilc2", "--target", "lumen.demo.evt.out.zz", "--defaults", "--deliver", "all"},
			{"consumer", "add", "LUMEN", "evilpull", "--pull", "--defaults"},
			{"consumer", "ls", "LUMEN"},
			{"kv", "get", "LUMEN_SNAP", "demo"},
		} {
			out, err := b.nats(t, args...)
			if !refused(out, err) {
				t.Errorf("nats %s was not refused: %v\n%s", strings.Join(args, " "), err, out)
			}
		}
		// Had a stream been made, these would come out as the light's
		// outputs or snapshots.
		for _, subj := range []string{"evil.state", "evil3.demo"} {
			if out, err := b.nats(t, "pub", subj, `{"from":"off","to":"red"}`); err != nil {
				t.Fatalf("nats pub %s: %v\n%s", subj, err, out)
			}
		}

		// Reading the history is what a client may do.
		if out, err := b.nats(t, "stream", "ls", "-n"); err != nil || !slices.Equal(strings.Fields(out), []string{"KV_LUMEN_SNAP", "LUMEN"}) {
			t.Errorf("nats stream ls -n: %v\n%s", err, out)
		}
		if out, err := b.nats(t, "stream", "info", "LUMEN"); err != nil || !strings.Contains(out, "Subjects: lumen.demo.evt.>") {
			t.Errorf("nats stream info LUMEN: %v\n%s", err, out)
		}
		if out, err := b.nats(t, "stream", "get", "LUMEN", "1"); err != nil || !strings.Contains(out, "lumen.demo.evt.in.upgrade") {
			t.Errorf("nats stream get LUMEN 1: %v\n%s", err, out)
		}
		// Paging needs a consumer: it fails at once, it does not wait.
		start := time.Now()
		out, err := b.natsTTY(t, "stream", "view", "LUMEN")
		if err == nil || !strings.Contains(out, "error") {
			t.Errorf("nats stream view LUMEN: %v\n%s", err, out)
		}
		t.Logf("nats stream view LUMEN (%v): %s", time.Since(start).Round(time.Millisecond), strings.TrimSpace(out))

		select {
		case ev := <-events:
			t.Errorf("an event after the attacks: %s %s", ev.Subject, ev.Data)
		case <-time.After(500 * time.Millisecond):
		}
		after := b.settled(t)
		if fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("the daemon's JetStream changed:\nbefore %+v\nafter  %+v", before, after)
		}
		if getAfter := b.get(t, "demo").Raw; !bytes.Equal(getAfter, getBefore) {
			t.Errorf("the light's model changed:\nbefore %s\nafter  %s", getBefore, getAfter)
		}
		b.stopAndVerify(t, "demo")
	})
}

// Attack 3: an input published with the dedupe id its first output would
// take (<light>:<seq>:0) is journaled under an id of the daemon's, so the
// output is journaled too.
func TestSecurityInputMsgID(t *testing.T) {
	secEachMode(t, func(t *testing.T, m secMode) {
		b := startSecBus(t, m)
		for i, body := range []string{
			`{"transition":"button_click"}`,
			`{"v":1,"id":"demo:%d:0","type":"fired","light":"demo","time":"2026-01-01T00:00:00Z","data":{"transition":"button_click"}}`,
		} {
			before := b.settled(t)
			next := before.LastSeq + 1
			if strings.Contains(body, "%d") {
				body = fmt.Sprintf(body, next)
			}
			id := fmt.Sprintf("demo:%d:0", next)
			if out, err := b.nats(t, "pub", "lumen.demo.evt.in.fired", body, "-H", "Nats-Msg-Id:"+id); err != nil {
				t.Fatalf("nats pub: %v\n%s", err, out)
			}
			lumentest.WaitFor(t, 10*time.Second, fmt.Sprintf("an output of input %d (dropped as a duplicate of %s?)", next, id), func() bool {
				return b.journal(t).LastSeq > next
			})
			after := b.settled(t)
			in := b.msg(t, next)
			if in.Subject != "lumen.demo.evt.in.fired" {
				t.Fatalf("#%d is %s, not the input (something else journaled first)", next, in.Subject)
			}
			if got := in.Header.Get(natsgo.MsgIdHdr); got == id || got == "" {
				t.Errorf("input %d journaled with Nats-Msg-Id %q", i, got)
			}
			var outputs []string
			for seq := next + 1; seq <= after.LastSeq; seq++ {
				o := b.msg(t, seq)
				var env messages.Envelope
				if err := json.Unmarshal(o.Data, &env); err != nil || env.Cause != next {
					t.Errorf("#%d %s is not an output of input %d: %s", seq, o.Subject, next, o.Data)
					continue
				}
				outputs = append(outputs, o.Subject+" "+o.Header.Get(natsgo.MsgIdHdr))
			}
			if want := "lumen.demo.evt.out.state " + id; len(outputs) == 0 || outputs[0] != want {
				t.Errorf("input %d's outputs %v, want first %q (not dropped as a duplicate)", i, outputs, want)
			}
			out, code := b.lumen(t, "why", "--json")
			var w messages.WhyReply
			if code != 0 || json.Unmarshal([]byte(out), &w) != nil {
				t.Fatalf("lumen why: exit %d\n%s", code, out)
			}
			if w.Input.Seq != next || w.Rule == nil {
				t.Errorf("lumen why explains input %d (rule %v), want %d", w.Input.Seq, w.Rule, next)
			}
		}
		b.stopAndVerify(t, "demo")
	})
}

// Attack 4: a client that answers every event carrying a reply subject
// (as if it were the journal acknowledging the daemon's publishes)
// changes nothing: every fire succeeds and is applied once.
func TestSecurityForgedAcks(t *testing.T) {
	secEachMode(t, func(t *testing.T, m secMode) {
		b := startSecBus(t, m)
		mustOK(t, request(t, b.nc, "lumen.demo.cmd.apply", `{
			"states":[{"name":"on","r":255,"g":255,"b":255}],
			"rules":[{"from":"*","on":"tick","to":"on","action":"setData('n', (getData('n') || 0) + 1)"}]}`))
		b.settled(t)
		evil := b.connect(t)
		var seen, answered atomic.Int64
		garbage := [][]byte{
			[]byte(`{"stream":"LUMEN","seq":1}`),
			[]byte(`{"error":{"code":503,"err_code":10077,"description":"insufficient resources"}}`),
			[]byte(`{"stream":"LUMEN","seq":1,"duplicate":true}`),
		}
		for _, subj := range []string{"lumen.*.evt.>", "lumen.*.evt.in.>", ">"} {
			if _, err := evil.Subscribe(subj, func(msg *natsgo.Msg) {
				seen.Add(1)
				if msg.Reply == "" {
					return
				}
				n := answered.Add(1)
				_ = msg.Respond(garbage[int(n)%len(garbage)])
			}); err != nil {
				t.Fatal(err)
			}
		}
		if err := evil.Flush(); err != nil {
			t.Fatal(err)
		}
		inputs := b.inputs(t, "lumen.demo.evt.in.fired")
		// Each fire says which input it journaled: the journal's
		// answer, which the liar's ({"seq":1}) must not replace.
		const fires = 20
		var seqs []uint64
		for i := 0; i < fires; i++ {
			var out string
			var ok bool
			if i%4 == 3 {
				o, err := b.nats(t, "req", "lumen.demo.cmd.fire", `{"transition":"tick"}`)
				out, ok = o, err == nil && strings.Contains(o, `"ok":true`)
			} else {
				o, code := b.lumen(t, "fire", "tick")
				out, ok = o, code == 0
			}
			sm := secInputSeq.FindStringSubmatch(out)
			if !ok || sm == nil {
				t.Fatalf("fire %d failed:\n%s", i, out)
			}
			seq, _ := strconv.ParseUint(sm[1], 10, 64)
			seqs = append(seqs, seq)
		}
		b.settled(t)
		for _, seq := range seqs {
			if in := b.msg(t, seq); in.Subject != "lumen.demo.evt.in.fired" || !strings.Contains(string(in.Data), `"tick"`) {
				t.Errorf("a fire reported input %d, which is %s %s", seq, in.Subject, in.Data)
			}
		}
		if got := b.inputs(t, "lumen.demo.evt.in.fired") - inputs; got != fires {
			t.Errorf("%d inputs journaled for %d fires", got, fires)
		}
		if n := b.get(t, "demo").Body["vars"].(map[string]any)["n"]; n != float64(fires) {
			t.Errorf("the light counted %v ticks, want %d", n, fires)
		}
		// A client's input with a reply gets the journal's answer, from
		// the daemon, not the liar's.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ack, err := b.js.Publish(ctx, "lumen.demo.evt.in.fired", []byte(`{"transition":"tick"}`))
		if err != nil {
			t.Fatalf("publish an input with a reply: %v", err)
		}
		if in := b.msg(t, ack.Sequence); ack.Stream != "LUMEN" || in.Subject != "lumen.demo.evt.in.fired" || string(in.Data) != `{"transition":"tick"}` {
			t.Errorf("the ack %+v names %s %s", ack, in.Subject, in.Data)
		}
		t.Logf("the liar saw %d messages, %d with a reply subject", seen.Load(), answered.Load())
		b.stopAndVerify(t, "demo")
	})
}

// secInputSeq finds the input a fire journaled, in lumen fire's output
// ("(input 12)") or a fire reply ("seq":12).
var secInputSeq = regexp.MustCompile(`(?:\(input |"seq":)(\d+)`)

// Attack 5: an envelope's time is the daemon's, not the client's: a timer
// armed by an input dated 2099 or 1970 is due from now.
func TestSecurityInputTime(t *testing.T) {
	secEachMode(t, func(t *testing.T, m secMode) {
		b := startSecBus(t, m)
		const delay = 10 * time.Minute
		mustOK(t, request(t, b.nc, "lumen.demo.cmd.apply", fmt.Sprintf(`{
			"states":[{"name":"on","r":255,"g":255,"b":255}],
			"rules":[
				{"from":"*","on":"arm","to":"on","action":"startTimer('ding', %d)"},
				{"from":"*","on":"ding","to":"off"}]}`, delay.Milliseconds())))
		for _, when := range []string{"2099-01-01T00:00:00Z", "1970-01-01T00:00:00Z"} {
			before := b.settled(t)
			body := `{"v":1,"id":"forged-` + when[:4] + `","type":"fired","light":"demo","time":"` + when + `","by":"timer:ding","data":{"transition":"arm"}}`
			sent := time.Now()
			if out, err := b.nats(t, "pub", "lumen.demo.evt.in.fired", body); err != nil {
				t.Fatalf("nats pub: %v\n%s", err, out)
			}
			lumentest.WaitFor(t, 10*time.Second, "the input's outputs", func() bool {
				return b.journal(t).LastSeq > before.LastSeq+1
			})
			b.settled(t)
			in := b.msg(t, before.LastSeq+1)
			var env messages.Envelope
			if err := json.Unmarshal(in.Data, &env); err != nil || in.Subject != "lumen.demo.evt.in.fired" {
				t.Fatalf("#%d: %s %s", before.LastSeq+1, in.Subject, in.Data)
			}
			if d := env.Time.Sub(sent); d < -5*time.Second || d > 5*time.Second {
				t.Errorf("input dated %s journaled at %s, %v from now", when, env.Time, d)
			}
			if env.By != messages.WhoNATS || strings.HasPrefix(env.ID, "forged") {
				t.Errorf("input dated %s journaled by %q with id %q", when, env.By, env.ID)
			}
			g := b.get(t, "demo")
			if g.Body["state"] != "on" {
				t.Errorf("after arm dated %s the light is %v (the timer fired at once?)", when, g.Body["state"])
			}
			timers, _ := g.Body["timers"].([]any)
			if len(timers) != 1 {
				t.Fatalf("timers after arm dated %s: %s", when, g.Raw)
			}
			due, err := time.Parse(time.RFC3339Nano, timers[0].(map[string]any)["deadline"].(string))
			if err != nil {
				t.Fatal(err)
			}
			if d := due.Sub(sent.Add(delay)); d < -5*time.Second || d > 5*time.Second {
				t.Errorf("timer armed by an input dated %s is due %s, %v off now+%v", when, due, d, delay)
			}
		}
		b.stopAndVerify(t, "demo")
	})
}

// Attack 6: the HTTP door's replies are its own, and a client cannot
// listen to the JetStream API or to a light's commands.
func TestSecurityReplies(t *testing.T) {
	secEachMode(t, func(t *testing.T, m secMode) {
		b := startSecBus(t, m, "--http", "127.0.0.1:0")
		page := b.d.Page(t)
		var perr permissionErrors
		spy := b.connect(t, natsgo.ErrorHandler(perr.handler))
		var mu sync.Mutex
		var got []string
		for _, subj := range []string{">", "_INBOX_lumen_http.>", "_INBOX.>", "$JS.API.>", "lumen.demo.cmd.>", "lumen.sys.in.>"} {
			if _, err := spy.Subscribe(subj, func(msg *natsgo.Msg) {
				mu.Lock()
				defer mu.Unlock()
				got = append(got, msg.Subject+" "+string(msg.Data))
			}); err != nil {
				t.Fatal(err)
			}
		}
		if err := spy.Flush(); err != nil {
			t.Fatal(err)
		}
		for _, subj := range []string{"_INBOX_lumen_http.>", "$JS.API.>", "lumen.demo.cmd.>", "lumen.sys.in.>"} {
			if !perr.waitFor(subj, 5*time.Second) {
				t.Errorf("subscribing to %s was not refused (errors: %v)", subj, perr.errs)
			}
		}
		call := func(method, path, body string, auth bool) (int, string) {
			req, err := http.NewRequest(method, strings.TrimSuffix(page, "/")+path, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if auth && m.user != "" {
				req.SetBasicAuth(m.user, m.pw)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			rb, _ := io.ReadAll(res.Body)
			return res.StatusCode, string(rb)
		}
		if m.user != "" {
			if code, _ := call("GET", "/api/v1/lights/demo/config", "", false); code != http.StatusUnauthorized {
				t.Errorf("the API without credentials: %d", code)
			}
		}
		var secret []string // what only the door's caller should see
		for _, c := range []struct{ method, path, body string }{
			{"POST", "/api/v1/lights/demo/fire", `{"transition":"button_click"}`},
			{"POST", "/api/v1/lights/demo/get", `{}`},
			{"GET", "/api/v1/lights/demo/config", ""},
			{"GET", "/api/v1/lights", ""},
		} {
			code, rb := call(c.method, c.path, c.body, true)
			if code != http.StatusOK {
				t.Fatalf("%s %s: %d %s", c.method, c.path, code, rb)
			}
			secret = append(secret, rb)
		}
		// A marker the spy sends itself comes after whatever reached it
		// before, on each subscription that hears it (">" and "_INBOX.>"):
		// a subscription hands its messages over in order.
		const marker = "_INBOX.spy.marker marker"
		if err := spy.Publish("_INBOX.spy.marker", []byte("marker")); err != nil {
			t.Fatal(err)
		}
		lumentest.WaitFor(t, 10*time.Second, "the spy's own marker on both its subscriptions", func() bool {
			mu.Lock()
			defer mu.Unlock()
			n := 0
			for _, s := range got {
				if s == marker {
					n++
				}
			}
			return n >= 2
		})
		mu.Lock()
		defer mu.Unlock()
		for _, s := range got {
			subj, data, _ := strings.Cut(s, " ")
			for _, p := range []string{"_INBOX_lumen_http.", "$JS.API.", "lumen.demo.cmd.", "lumen.sys.", "_R_."} {
				if strings.HasPrefix(subj, p) {
					t.Errorf("a client received %s", s)
				}
			}
			if strings.Contains(data, `"ok":true`) {
				t.Errorf("a client received a reply: %s", s)
			}
			for _, r := range secret {
				if strings.TrimSpace(r) != "" && strings.Contains(data, strings.TrimSpace(r)) {
					t.Errorf("a client received the door's answer on %s", subj)
				}
			}
		}
		t.Logf("the spy received %d messages (the light's events, and its own marker twice)", len(got))
		b.stopAndVerify(t, "demo")
	})
}

// A client cannot take or settle the light's inputs on its consumer: a
// pull of the next message has no responder, and acknowledgements
// (+ACK, +TERM, -NAK) of the sequences to come, published before they
// are, reach nothing; the inputs are applied.
func TestSecurityConsumerHijack(t *testing.T) {
	secEachMode(t, func(t *testing.T, m secMode) {
		b := startSecBus(t, m)
		before := b.settled(t)
		next := before.LastSeq + 1
		if _, err := b.nc.Request("$JS.API.CONSUMER.MSG.NEXT.LUMEN.light-demo", []byte(`{"batch":10,"expires":2000000000}`), 3*time.Second); err != natsgo.ErrNoResponders {
			t.Errorf("pull the light's inputs: %v, want no responders", err)
		}
		if _, err := b.nc.Request("$JS.API.CONSUMER.INFO.LUMEN.light-demo", nil, 3*time.Second); err != natsgo.ErrNoResponders {
			t.Errorf("the light's consumer info: %v, want no responders", err)
		}
		// The light's consumer delivers input N as its Nth message: an
		// acknowledgement names both sequences.
		for seq := next; seq < next+12; seq++ {
			for _, verb := range []string{"+TERM", "+ACK", "-NAK"} {
				subj := fmt.Sprintf("$JS.ACK.LUMEN.light-demo.1.%d.%d.0.0", seq, seq)
				if err := b.nc.Publish(subj, []byte(verb)); err != nil {
					t.Fatalf("publish %s: %v", subj, err)
				}
			}
		}
		if err := b.nc.Flush(); err != nil {
			t.Fatal(err)
		}
		for _, tr := range []string{"button_click", "button_click", "button_click"} {
			mustOK(t, request(t, b.nc, "lumen.demo.cmd.fire", `{"transition":"`+tr+`"}`))
		}
		if out, err := b.nats(t, "pub", "lumen.demo.evt.in.fired", `{"transition":"button_hold"}`); err != nil {
			t.Fatalf("nats pub: %v\n%s", err, out)
		}
		lumentest.WaitFor(t, 10*time.Second, "the published hold to be applied", func() bool {
			return b.get(t, "demo").Body["state"] == "off"
		})
		if got := b.inputs(t, "lumen.demo.evt.in.fired"); got != 4 {
			t.Errorf("%d inputs journaled, want 4", got)
		}
		b.stopAndVerify(t, "demo")
	})
}

// What a client publishes on a light's event subjects. Outputs, LED and
// gpio are refused; inputs go to the daemon's ingress. Anything else
// under lumen.<light>.evt. is not journaled, but reaches every client
// that follows the light (lumen tail subscribes to lumen.<light>.evt.>
// and prints an envelope there as the light's event).
func TestSecurityForgedEvents(t *testing.T) {
	const forged = `{"v":1,"id":"demo:9:0","type":"state","light":"demo","time":"2026-01-01T00:00:00Z","cause":9,"data":{"from":"off","to":"red","rule":"r1","transition":"button_click","changed":true}}`
	secEachMode(t, func(t *testing.T, m secMode) {
		b := startSecBus(t, m)
		before := b.settled(t)
		watch := b.connect(t)
		events := make(chan *natsgo.Msg, 64)
		for _, subj := range []string{"lumen.demo.evt.>", "lumen.demo.led", "lumen.demo.led.frame", "lumen.demo.gpio.*"} {
			if _, err := watch.ChanSubscribe(subj, events); err != nil {
				t.Fatal(err)
			}
		}
		if err := watch.Flush(); err != nil {
			t.Fatal(err)
		}
		drain := func() []string {
			var got []string
			deadline := time.After(500 * time.Millisecond)
			for {
				select {
				case ev := <-events:
					got = append(got, ev.Subject)
				case <-deadline:
					return got
				}
			}
		}
		for _, subj := range []string{"lumen.demo.evt.out.state", "lumen.demo.evt.out.gap", "lumen.demo.led", "lumen.demo.led.frame", "lumen.demo.gpio.button"} {
			out, err := b.nats(t, "pub", subj, forged)
			if err == nil || !strings.Contains(out, "Permissions Violation for Publish") {
				t.Errorf("nats pub %s: %v\n%s", subj, err, out)
			}
		}
		if got := drain(); len(got) != 0 {
			t.Errorf("a watcher received forged %v", got)
		}
		// Not outputs, not inputs: the journal does not take them, but
		// a watcher receives them.
		for _, subj := range []string{"lumen.demo.evt.state", "lumen.demo.evt.out", "lumen.demo.evt.in", "lumen.demo.evt.gap.x"} {
			if out, err := b.nats(t, "pub", subj, forged); err != nil && !strings.Contains(out, "Permissions Violation") {
				t.Fatalf("nats pub %s: %v\n%s", subj, err, out)
			}
		}
		leaked := drain()
		if after := b.settled(t); after.LastSeq != before.LastSeq || after.Msgs != before.Msgs {
			t.Errorf("the journal went from %+v to %+v", before, after)
		}
		b.stopAndVerify(t, "demo")
		if len(leaked) != 0 {
			t.Errorf("a client's publish to %v reached a watcher of lumen.demo.evt.> (lumen tail prints %s there as demo's output)", leaked, forged)
		}
	})
}

// A request's reply subject is the requester's to choose, and nats-server
// does not check it against the requester's publish permissions: the
// daemon's answer to a command, to an input or to a read of the journal
// is delivered in the clients' account on whatever subject the client
// named, a light's outputs, LED or gpio included. With a journal read
// the content is the client's too: an input journaled through the
// ingress as it came (not an envelope), got back with a direct get whose
// reply is lumen.<light>.led, is an LED announcement. The HTTP door is in
// an account of its own, so the page's LED stream never shows it; the
// clients' own watchers may (one principal: the threat model).
func TestSecurityReplyRedirect(t *testing.T) {
	secEachMode(t, func(t *testing.T, m secMode) {
		b := startSecBus(t, m, "--http", "127.0.0.1:0")
		page := strings.TrimSuffix(b.d.Page(t), "/")
		req, err := http.NewRequest("GET", page+"/api/v1/lights/demo/led", nil)
		if err != nil {
			t.Fatal(err)
		}
		if m.user != "" {
			req.SetBasicAuth(m.user, m.pw)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		res, err := http.DefaultClient.Do(req.WithContext(ctx))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		led := make(chan string, 64)
		go func() {
			defer close(led)
			buf := make([]byte, 64<<10)
			var line []byte
			for {
				n, err := res.Body.Read(buf)
				line = append(line, buf[:n]...)
				for {
					i := bytes.IndexByte(line, '\n')
					if i < 0 {
						break
					}
					if l := string(line[:i]); strings.HasPrefix(l, "data: ") {
						select {
						case led <- strings.TrimPrefix(l, "data: "):
						default: // more than the test reads
						}
					}
					line = line[i+1:]
				}
				if err != nil {
					return
				}
			}
		}()
		select {
		case first := <-led:
			if !strings.Contains(first, `"state":"off"`) {
				t.Fatalf("the page's LED stream starts with %s", first)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the page's LED stream sent nothing")
		}
		watch := b.connect(t)
		seen := make(chan *natsgo.Msg, 256)
		for _, subj := range []string{"lumen.demo.evt.>", "lumen.demo.led", "lumen.demo.led.frame", "lumen.demo.gpio.*"} {
			if _, err := watch.ChanSubscribe(subj, seen); err != nil {
				t.Fatal(err)
			}
		}
		if err := watch.Flush(); err != nil {
			t.Fatal(err)
		}

		const paint = `{"state":"red","pixels":[{"r":255,"g":0,"b":0}],"raw":[{"r":255,"g":0,"b":0}]}`
		rep, err := b.nc.Request("lumen.demo.evt.in.paint", []byte(paint), 10*time.Second)
		if err != nil {
			t.Fatalf("an input through the ingress: %v", err)
		}
		var ack struct{ Seq uint64 }
		if err := json.Unmarshal(rep.Data, &ack); err != nil || ack.Seq == 0 {
			t.Fatalf("the ingress answered %s", rep.Data)
		}
		for _, r := range []struct{ subj, reply, body string }{
			{"$JS.API.DIRECT.GET.LUMEN", "lumen.demo.led", fmt.Sprintf(`{"seq":%d}`, ack.Seq)},
			{"$JS.API.STREAM.MSG.GET.LUMEN", "lumen.demo.led.frame", fmt.Sprintf(`{"seq":%d}`, ack.Seq)},
			{"lumen.demo.cmd.get", "lumen.demo.evt.out.state", `{}`},
			{"lumen.demo.cmd.led", "lumen.demo.gpio.button", `{}`},
			{"lumen.demo.evt.in.fired", "lumen.demo.evt.out.gap", `{"transition":"nothing_listens"}`},
			{"$JS.API.STREAM.INFO.LUMEN", "lumen.demo.evt.out.error", ``},
		} {
			if err := b.nc.PublishRequest(r.subj, r.reply, []byte(r.body)); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.nc.Flush(); err != nil {
			t.Fatal(err)
		}
		b.settled(t)
		// What the journal holds, a watcher may see.
		journaled := map[string]bool{}
		for seq := ack.Seq; seq <= b.journal(t).LastSeq; seq++ {
			if j := b.msg(t, seq); j != nil {
				journaled[j.Subject+" "+string(j.Data)] = true
			}
		}
		var forged []string
		for len(seen) > 0 {
			ev := <-seen
			if !journaled[ev.Subject+" "+string(ev.Data)] {
				forged = append(forged, fmt.Sprintf("%s %.80s", ev.Subject, ev.Data))
			}
		}
		var shown []string
		for len(led) > 0 {
			if l := <-led; !strings.Contains(l, `"state":"off"`) {
				shown = append(shown, l)
			}
		}
		if s := b.get(t, "demo").Body["state"]; s != "off" {
			t.Fatalf("the light is %v", s)
		}
		b.stopAndVerify(t, "demo")
		// The door is an account of its own: the page never sees it.
		if len(shown) != 0 {
			t.Errorf("the page's LED stream showed %q while the light is off", shown)
		}
		// Within the clients' account one principal can deceive
		// itself (the threat model says so: the journal is the truth).
		if len(forged) != 0 {
			t.Logf("replies on a client's reply subject reached the clients' own watchers (one principal): %q", forged)
		}
	})
}

// dialMQTTAs dials as the client, with its credentials when it has any.
func dialMQTTAs(t *testing.T, addr, clientID string, m secMode) *lumentest.MQTTClient {
	t.Helper()
	return lumentest.DialMQTT(t, addr, clientID, m.user, m.pw)
}

// An MQTT client is in an account of its own: what it publishes on a
// light's outputs or LED reaches no NATS client, and its input goes
// through the daemon's ingress, with the daemon's id and time.
func TestSecurityMQTT(t *testing.T) {
	secEachMode(t, func(t *testing.T, m secMode) {
		b := startSecBus(t, m, "--mqtt", "127.0.0.1:0")
		addr := b.d.Line(t, regexp.MustCompile(`lumen: mqtt on mqtt://(\S+)`))
		watch := b.connect(t)
		seen := make(chan *natsgo.Msg, 256)
		for _, subj := range []string{"lumen.demo.evt.>", "lumen.demo.led", "lumen.demo.led.frame", "lumen.demo.gpio.*"} {
			if _, err := watch.ChanSubscribe(subj, seen); err != nil {
				t.Fatal(err)
			}
		}
		if err := watch.Flush(); err != nil {
			t.Fatal(err)
		}
		before := b.settled(t)
		c := dialMQTTAs(t, addr, "mallory", m)
		const forged = `{"v":1,"id":"demo:9:0","type":"state","light":"demo","time":"2026-01-01T00:00:00Z","cause":9,"data":{"from":"off","to":"red","rule":"r1","transition":"button_click","changed":true}}`
		for _, topic := range []string{"lumen/demo/evt/out/state", "lumen/demo/evt/state", "lumen/demo/led", "lumen/demo/gpio/button", "lumen/sys/in/ghost/fired"} {
			c.Publish(t, topic, forged)
		}
		sent := time.Now()
		c.Publish(t, "lumen/demo/evt/in/fired", `{"v":1,"id":"forged","type":"fired","light":"demo","time":"2099-01-01T00:00:00Z","by":"timer:x","data":{"transition":"button_click"}}`)
		lumentest.WaitFor(t, 10*time.Second, "the MQTT input and its outputs", func() bool {
			return b.journal(t).LastSeq > before.LastSeq+1
		})
		after := b.settled(t)
		in := b.msg(t, before.LastSeq+1)
		var env messages.Envelope
		if err := json.Unmarshal(in.Data, &env); err != nil || in.Subject != "lumen.demo.evt.in.fired" {
			t.Fatalf("#%d: %s %s", before.LastSeq+1, in.Subject, in.Data)
		}
		if d := env.Time.Sub(sent); d < -5*time.Second || d > 5*time.Second || env.ID == "forged" || env.By == "timer:x" {
			t.Errorf("the MQTT input journaled as %s", in.Data)
		}
		journaled := map[string]bool{}
		for seq := before.LastSeq + 1; seq <= after.LastSeq; seq++ {
			j := b.msg(t, seq)
			if seq > before.LastSeq+1 {
				var o messages.Envelope
				if json.Unmarshal(j.Data, &o) != nil || o.Cause != before.LastSeq+1 {
					t.Errorf("#%d %s is not an output of the MQTT input: %s", seq, j.Subject, j.Data)
				}
			}
			journaled[j.Subject+" "+string(j.Data)] = true
		}
		for len(seen) > 0 {
			if ev := <-seen; !journaled[ev.Subject+" "+string(ev.Data)] && ev.Subject != "lumen.demo.led" {
				t.Errorf("a NATS client received %s %s", ev.Subject, ev.Data)
			} else if ev.Subject == "lumen.demo.led" && strings.Contains(string(ev.Data), `"demo:9:0"`) {
				t.Errorf("a NATS client received the MQTT client's LED %s", ev.Data)
			}
		}
		if s := b.get(t, "demo").Body["state"]; s != "red" {
			t.Errorf("after the MQTT click the light is %v", s)
		}
		b.stopAndVerify(t, "demo")
	})
}
