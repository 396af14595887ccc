package main_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/nats/broker"
)

// TestReplayVerify: replay --verify passes on a stopped daemon's data dir
// and fails, naming the sequence, on a copy with one altered output.
func TestReplayVerify(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := startDaemon(t, dir)
	nc := connect(t, d.URL)
	mustOK(t, request(t, nc, "lumen.demo.cmd.apply", `{
		"states":[{"name":"red","r":255,"g":0,"b":0},{"name":"dice","r":"random()*255","g":0,"b":0}],
		"rules":[
		  {"from":"*","on":"button_click","to":"red","condition":"getData('n') === undefined","action":"setData('n', 2)"},
		  {"from":"red","on":"button_click","to":"red","condition":"getData('n') > 0","action":"setData('n', getData('n') - 1); setData('roll', random())"},
		  {"from":"red","on":"button_click","to":"off","condition":"getData('n') === 0","action":"setData('n', undefined)"}
		]}`))
	var stateSeq uint64
	for i := 0; i < 6; i++ {
		r := mustOK(t, request(t, nc, "lumen.demo.cmd.fire", `{"transition":"button_click"}`))
		for _, o := range r.Outputs {
			if o["type"] == "var" && stateSeq == 0 {
				// remember one output to alter later
				stateSeq = uint64(r.Body["seq"].(float64))
			}
		}
	}
	d.Stop()

	out, code := runCLI(t, "", "replay", "--data", dir, "--light", "demo", "--verify")
	if code != 0 || !strings.Contains(out, "every recorded output matches") || !strings.Contains(out, "button_click") {
		t.Fatalf("replay --verify on the stopped daemon's dir: %d\n%s", code, out)
	}

	// A copy of the journal with one output altered.
	bad := filepath.Join(t.TempDir(), "copy")
	if err := exec.Command("cp", "-a", dir, bad).Run(); err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(filepath.Join(bad, "lumen.lock"))
	altered := alterOneOutput(t, bad, `"name":"roll"`)
	out, code = runCLI(t, "", "replay", "--data", bad, "--light", "demo", "--verify", "--quiet")
	if code != 1 || !strings.Contains(out, "output at sequence "+strconv.FormatUint(altered, 10)+" differs") {
		t.Fatalf("replay --verify on an altered journal must fail naming sequence %d: %d\n%s", altered, code, out)
	}
}

// alterOneOutput rewrites the LUMEN stream of a stopped data dir, changing
// the first output whose body contains marker, and returns its sequence.
func alterOneOutput(t *testing.T, dir, marker string) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := broker.Start(ctx, broker.Config{DataDir: dir, Listen: "127.0.0.1:0", Sync: "batch"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown()
	js := b.JetStream()
	s, err := js.Stream(ctx, "LUMEN")
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []*nats.Msg
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, &nats.Msg{Subject: m.Subject, Data: m.Data})
	}
	if info.State.FirstSeq != 1 {
		t.Fatalf("stream starts at %d", info.State.FirstSeq)
	}
	if err := js.DeleteStream(ctx, "LUMEN"); err != nil {
		t.Fatal(err)
	}
	if err := broker.EnsureStreams(ctx, js, 0, nil); err != nil {
		t.Fatal(err)
	}
	var altered uint64
	for i, m := range msgs {
		seq := uint64(i + 1)
		if altered == 0 && strings.Contains(m.Subject, ".evt.out.") && strings.Contains(string(m.Data), marker) {
			m.Data = []byte(strings.Replace(string(m.Data), `"value":`, `"value":1`, 1))
			altered = seq
		}
		ack, err := js.PublishMsg(ctx, m)
		if err != nil || ack.Sequence != seq {
			t.Fatalf("republish %d: %v %v", seq, ack, err)
		}
	}
	if altered == 0 {
		t.Fatal("no output to alter")
	}
	return altered
}

// purge purges the events on subj from the LUMEN stream of a stopped data
// dir, as retention does: with the daemon's own rights, which no client
// has.
func purge(t *testing.T, dir, subj string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := broker.Inspect(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown()
	s, err := b.JetStream().Stream(ctx, "LUMEN")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Purge(ctx, jetstream.WithPurgeSubject(subj)); err != nil {
		t.Fatal(err)
	}
}
