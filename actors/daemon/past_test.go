package daemon_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/messages"
)

// The light's past on the wire, in process: get at a past seq or time,
// the history of its configuration, and rollback. (The CLI's words for
// them: cmd/lumen's past_e2e_test.go.)

// pastSeq is the seq of a reply that must be a success.
func pastSeq(t *testing.T, nc *nats.Conn, verb, body string) uint64 {
	t.Helper()
	return uint64(mustOK(t, nc, verb, body)["seq"].(float64))
}

// pastGet is the light as get tells it for body.
func pastGet(t *testing.T, nc *nats.Conn, body string) messages.GetReply {
	t.Helper()
	b, code := request(t, nc, messages.VerbGet, body)
	var g messages.GetReply
	if code != "" || json.Unmarshal(b, &g) != nil {
		t.Fatalf("get %s: %s %s", body, code, b)
	}
	return g
}

// pastConfig is the light's configuration as export shows it after the
// input seq (0 for now), but for the variables, which a rollback leaves
// as they are.
func pastConfig(t *testing.T, nc *nats.Conn, seq uint64) string {
	t.Helper()
	body := `{}`
	if seq != 0 {
		body = fmt.Sprintf(`{"seq":%d}`, seq)
	}
	cfg := pastGet(t, nc, body).Config()
	cfg.Vars = nil
	return string(mustMarshal(t, cfg))
}

// get at a past seq or time: the light as it was, rebuilt from the
// journal; the present is untouched. A seq or time the journal cannot
// answer for is refused with a sentence.
func TestPastGetAtSeqAndTime(t *testing.T) {
	nc := connectTo(t, start(t, t.TempDir(), "demo"))
	var seqs []uint64
	for range 3 {
		seqs = append(seqs, pastSeq(t, nc, messages.VerbFire, `{"transition":"button_click"}`))
	}
	// Between the two clicks: just after the journal stored the last
	// event before the second (the times are the journal's own).
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stream, err := js.Stream(ctx, "LUMEN")
	if err != nil {
		t.Fatal(err)
	}
	before, err := stream.GetMsg(ctx, seqs[1]-1)
	if err != nil {
		t.Fatal(err)
	}
	between := before.Time.Add(time.Nanosecond).UTC().Format(time.RFC3339Nano)
	mustOK(t, nc, messages.VerbSetVar, `{"name":"note","value":"after"}`)
	for _, tc := range []struct{ body, want string }{
		{fmt.Sprintf(`{"seq":%d}`, seqs[0]), "red"},
		{fmt.Sprintf(`{"seq":%d}`, seqs[1]), "green"},
		{fmt.Sprintf(`{"seq":%d}`, seqs[1]+1), "green"}, // an output of the second click
		{`{"at":"` + between + `"}`, "red"},
		{`{}`, "blue"},
	} {
		if g := pastGet(t, nc, tc.body); g.State != tc.want {
			t.Errorf("get %s: state %s, want %s", tc.body, g.State, tc.want)
		}
	}
	if g := pastGet(t, nc, fmt.Sprintf(`{"seq":%d}`, seqs[2])); g.Vars["note"] != nil {
		t.Errorf("the past has a variable set after it: %v", g.Vars)
	}
	if g := pastGet(t, nc, `{}`); string(g.Vars["note"]) != `"after"` {
		t.Errorf("the present lost its variable: %v", g.Vars)
	}
	for _, tc := range []struct{ body, says string }{
		{`{"seq":999999}`, "no event of light demo"},
		{`{"at":"` + time.Now().Add(time.Hour).UTC().Format(time.RFC3339) + `"}`, "in the future"},
		{`{"at":"2020-01-01T00:00:00Z"}`, "starts at"},
	} {
		b, code := request(t, nc, messages.VerbGet, tc.body)
		var e messages.ErrorReply
		if code == "" || json.Unmarshal(b, &e) != nil || !strings.Contains(e.Error, tc.says) {
			t.Errorf("get %s: %s %s, want a refusal saying %q", tc.body, code, b, tc.says)
		}
	}
}

// history lists each configuration change and who made it, not the
// variables; rollback makes the configuration what it was, as export
// showed it then, leaves the variables, and is itself a change that can
// be rolled back.
func TestPastHistoryAndRollback(t *testing.T) {
	nc := connectTo(t, start(t, t.TempDir(), "demo"))
	first := pastSeq(t, nc, messages.VerbCreateState, `{"name":"teal","r":0,"g":128,"b":128}`)
	mustOK(t, nc, messages.VerbFire, `{"transition":"button_click"}`)
	varSeq := pastSeq(t, nc, messages.VerbSetVar, `{"name":"n","value":1}`)
	second := pastSeq(t, nc, messages.VerbAppendRules, `{"rules":[{"from":"teal","on":"button_click","to":"off"}]}`)
	third := pastSeq(t, nc, messages.VerbCreateState, `{"name":"teal","r":0,"g":200,"b":200}`)

	history := func() []messages.ConfigChange {
		t.Helper()
		b, code := request(t, nc, messages.VerbHistory, `{}`)
		var h messages.HistoryReply
		if code != "" || json.Unmarshal(b, &h) != nil || !h.OK || h.Light != "demo" {
			t.Fatalf("history: %s %s", code, b)
		}
		return h.Changes
	}
	changes := history()
	summaries := map[uint64]string{}
	for _, c := range changes {
		summaries[c.Seq] = c.Summary
		if c.Seq == varSeq || strings.Contains(c.Summary, "var") {
			t.Errorf("history shows a variable: %+v", c)
		}
	}
	for seq, want := range map[uint64]string{first: "+state teal", second: "+rule r6", third: "~state teal"} {
		if !strings.Contains(summaries[seq], want) {
			t.Errorf("history of %d: %q, want %q; all: %v", seq, summaries[seq], want, summaries)
		}
	}
	// Who made each change: the seed, bare nats requests.
	if len(changes) < 4 || changes[0].By != messages.WhoLocal || changes[1].By != messages.WhoNATS {
		t.Errorf("history does not say who made the changes: %+v", changes)
	}

	thenCfg, nowCfg := pastConfig(t, nc, first), pastConfig(t, nc, 0)
	if b, code := request(t, nc, messages.VerbRollback, fmt.Sprintf(`{"seq":%d}`, first)); code != "" || !strings.Contains(string(b), "r6") {
		t.Fatalf("rollback %d: %s %s", first, code, b)
	}
	if got := pastConfig(t, nc, 0); got != thenCfg {
		t.Errorf("after rollback to %d the configuration is\n%s\nwant\n%s", first, got, thenCfg)
	}
	changes = history()
	rolled := changes[len(changes)-1]
	if rolled.Seq <= third || !strings.HasPrefix(rolled.By, messages.WhoRollback+":") || !strings.Contains(rolled.Summary, fmt.Sprintf("rollback to %d:", first)) {
		t.Errorf("the rollback in the history: %+v", rolled)
	}
	// Rolled back itself: to just before the rollback.
	mustOK(t, nc, messages.VerbRollback, fmt.Sprintf(`{"seq":%d}`, third))
	if got := pastConfig(t, nc, 0); got != nowCfg {
		t.Errorf("after rolling the rollback back the configuration is\n%s\nwant\n%s", got, nowCfg)
	}
	if v := string(pastGet(t, nc, `{}`).Vars["n"]); v != "1" {
		t.Errorf("a rollback changed a variable: n = %v", v)
	}
	if b, code := request(t, nc, messages.VerbRollback, `{"seq":999999}`); code == "" {
		t.Errorf("rollback to no input: %s", b)
	}
}
