package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nats.go/micro"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/wire"
	"github.com/lumen-home/lumen/web"
)

// connectTo connects to d as a client does; closed when the test ends.
func connectTo(t *testing.T, d *daemon.Daemon) *nats.Conn {
	t.Helper()
	return lumentest.Connect(t, d.URL())
}

// lastSeq is the journal's last sequence.
func lastSeq(t *testing.T, nc *nats.Conn) uint64 {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	seq, err := journal.New(js).LastSeq(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

// reply is a command's reply: its error code and sentence (from the
// headers), its body as sent and, when that is a JSON object, decoded.
type reply struct {
	Code   string // Nats-Service-Error-Code, "" on success
	Header string // Nats-Service-Error
	Raw    []byte
	Body   map[string]any
}

// requestTo sends body to lumen.<light>.cmd.<verb>; a reply that is not
// JSON fails the test, as every verb answers in JSON.
func requestTo(t *testing.T, nc *nats.Conn, light, verb, body string) reply {
	t.Helper()
	m, err := nc.Request("lumen."+light+".cmd."+verb, []byte(body), 30*time.Second)
	if err != nil {
		t.Fatalf("%s %s: %v", verb, body, err)
	}
	if !json.Valid(m.Data) {
		t.Fatalf("the reply to %s is not JSON: %s", verb, m.Data)
	}
	r := reply{Raw: m.Data}
	if m.Header != nil {
		r.Code, r.Header = m.Header.Get(micro.ErrorCodeHeader), m.Header.Get(micro.ErrorHeader)
	}
	_ = json.Unmarshal(m.Data, &r.Body) // nil for a reply that is not an object
	return r
}

// request sends body to lumen.demo.cmd.<verb> and returns the reply's
// body and its error code ("" for a success).
func request(t *testing.T, nc *nats.Conn, verb, body string) ([]byte, string) {
	t.Helper()
	r := requestTo(t, nc, "demo", verb, body)
	return r.Raw, r.Code
}

// mustOK is request for a reply that must be a success; it returns the
// reply's body decoded.
func mustOK(t *testing.T, nc *nats.Conn, verb, body string) map[string]any {
	t.Helper()
	b, code := request(t, nc, verb, body)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || code != "" || m["ok"] != true {
		t.Fatalf("%s %s: %s %s", verb, body, code, b)
	}
	return m
}

// An apply with "dry_run":true says what the apply would change and
// changes nothing: the light is as it was and nothing is journaled. Its
// refusals are those of the apply. The apply then says the same changes,
// and applying the file again changes nothing, its rules keeping their
// ids.
func TestApplyDryRun(t *testing.T) {
	d := start(t, t.TempDir(), "demo")
	nc := connectTo(t, d)
	ctx := context.Background()
	c := wire.New(nc)
	var before messages.GetReply
	if err := c.Call(ctx, "demo", messages.VerbGet, nil, &before); err != nil {
		t.Fatal(err)
	}
	// The demo's file, as a person writes it (no ids): red recolored,
	// blue gone, purple new, one rule changed, one gone.
	const file = `"states":[{"name":"red","r":200,"g":0,"b":0},{"name":"green","r":0,"g":255,"b":0,"description":"plain green"},{"name":"purple","r":128,"g":0,"b":128}],
		"rules":[{"from":"off","on":"button_click","to":"red"},{"from":"red","on":"button_click","to":"green"},
		{"from":"green","on":"button_click","to":"purple"},{"from":"*","on":"button_hold","to":"off","priority":100}],"vars":{"n":1}`
	const want = `{"states":{"added":["purple"],"changed":["red"],"removed":["blue"]},"rules":{"added":["r6"],"removed":["r3","r4"]},"vars":{"added":["n"]}}`
	seq := lastSeq(t, nc)

	body, code := request(t, nc, messages.VerbApply, `{`+file+`,"dry_run":true}`)
	var dry struct {
		OK      bool            `json:"ok"`
		DryRun  bool            `json:"dry_run"`
		Changes json.RawMessage `json:"changes"`
	}
	if err := json.Unmarshal(body, &dry); err != nil || code != "" || !dry.OK || !dry.DryRun || string(dry.Changes) != want {
		t.Fatalf("dry run: %s %s, want changes %s", code, body, want)
	}
	for _, tt := range []struct{ name, body, code, says string }{
		{"an empty configuration", `{"dry_run":true}`, "400", `"confirm_empty":true`},
		{"a source below the minimum interval", `{"dry_run":true,"states":[],"rules":[{"from":"*","on":"x","to":"off"}],"sources":[{"name":"w","interval_ms":10,"fetch":{"tool":"t"},"store":{"x":"result"}}]}`, "400", "interval_ms"},
		{"a rule to no state", `{"dry_run":true,"states":[],"rules":[{"from":"*","on":"x","to":"nowhere"}]}`, "404", `to names state "nowhere"`},
	} {
		body, code := request(t, nc, messages.VerbApply, tt.body)
		var e messages.ErrorReply
		if err := json.Unmarshal(body, &e); err != nil || code != tt.code || !strings.Contains(e.Error, tt.says) {
			t.Errorf("dry run of %s: %s %s, want %s saying %s", tt.name, code, body, tt.code, tt.says)
		}
	}
	var after messages.GetReply
	if err := c.Call(ctx, "demo", messages.VerbGet, nil, &after); err != nil {
		t.Fatal(err)
	}
	if b, a := mustMarshal(t, before), mustMarshal(t, after); !bytes.Equal(b, a) {
		t.Errorf("the dry runs changed the light:\n%s\n%s", b, a)
	}
	if now := lastSeq(t, nc); now != seq {
		t.Errorf("the dry runs were journaled: last sequence %d, was %d", now, seq)
	}

	// The refusal a dry run gets is the apply's.
	dryBody, _ := request(t, nc, messages.VerbApply, `{"dry_run":true,"states":[],"rules":[{"from":"*","on":"x","to":"nowhere"}]}`)
	realBody, _ := request(t, nc, messages.VerbApply, `{"states":[],"rules":[{"from":"*","on":"x","to":"nowhere"}]}`)
	if !bytes.Equal(dryBody, realBody) {
		t.Errorf("refused:\ndry run %s\napply   %s", dryBody, realBody)
	}

	body, code = request(t, nc, messages.VerbApply, `{`+file+`}`)
	var r struct {
		OK      bool            `json:"ok"`
		Changes json.RawMessage `json:"changes"`
	}
	if err := json.Unmarshal(body, &r); err != nil || code != "" || !r.OK || string(r.Changes) != want {
		t.Fatalf("apply: %s %s, want changes %s", code, body, want)
	}
	body, code = request(t, nc, messages.VerbApply, `{`+file+`}`)
	if err := json.Unmarshal(body, &r); err != nil || code != "" || string(r.Changes) != `{}` {
		t.Fatalf("the same file again: %s %s, want no changes", code, body)
	}
	// Rules not given ids keep theirs: delete_rules by id still works.
	if body, code := request(t, nc, messages.VerbDeleteRules, `{"ids":["r6"]}`); code != "" {
		t.Errorf("delete r6 after the file was applied twice: %s %s", code, body)
	}
}

// enable_rules switches rules off and on by id over the wire; an
// unknown id is a 404 and changes nothing.
func TestEnableRulesOnTheWire(t *testing.T) {
	d := start(t, t.TempDir(), "demo")
	nc := connectTo(t, d)
	if body, code := request(t, nc, messages.VerbEnableRules, `{"ids":["r1"],"enabled":false}`); code != "" || !strings.Contains(string(body), `"data":{"op":"disable_rules","rules":["r1"]}`) {
		t.Fatalf("disable r1: %s %s", code, body)
	}
	if body, code := request(t, nc, messages.VerbFire, `{"transition":"button_click"}`); code != "" || !strings.Contains(string(body), `"state":"off"`) {
		t.Errorf("a click with r1 disabled: %s %s", code, body)
	}
	if body, code := request(t, nc, messages.VerbEnableRules, `{"ids":["r1","r99"],"enabled":true}`); code != "404" || !strings.Contains(string(body), "no rule has id r99; nothing was changed") {
		t.Errorf("enable r1 and r99: %s %s", code, body)
	}
	if body, code := request(t, nc, messages.VerbEnableRules, `{"ids":["r1"],"enabled":true}`); code != "" {
		t.Fatalf("enable r1: %s %s", code, body)
	}
	if body, code := request(t, nc, messages.VerbFire, `{"transition":"button_click"}`); code != "" || !strings.Contains(string(body), `"state":"red"`) {
		t.Errorf("a click with r1 enabled again: %s %s", code, body)
	}
}

// A verb nobody serves gets a 404 that lists the verbs, on the light's
// subjects and the fleet's, where NATS would say "no responders"; every
// known verb is answered once, by its own endpoint, the catch-all
// staying silent.
func TestUnknownVerb(t *testing.T) {
	cfg := func(c *daemon.Config) { c.Groups = map[string][]string{"upstairs": {"demo"}} }
	d := startWith(t, cfg, "demo")
	nc := connectTo(t, d)
	for _, tt := range []struct{ subject, says string }{
		{"lumen.demo.cmd.nope", `unknown command "nope"; lumen.demo.cmd takes ` + strings.Join(messages.Verbs(), ", ")},
		{"lumen.fleet.cmd.apply", `unknown command "apply"; lumen.fleet.cmd takes fire, get, power, set_brightness, set_color, set_state, set_var, toggle`},
		{"lumen.group.upstairs.cmd.nope", `unknown command "nope"; lumen.group.upstairs.cmd takes fire, get, power, set_brightness, set_color, set_state, set_var, toggle`},
	} {
		msg, err := nc.Request(tt.subject, []byte(`{}`), 10*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", tt.subject, err)
		}
		var e messages.ErrorReply
		if err := json.Unmarshal(msg.Data, &e); err != nil || e.Code != 404 || e.Error != tt.says || msg.Header.Get("Nats-Service-Error-Code") != "404" {
			t.Errorf("%s: %s, want a 404 saying %s", tt.subject, msg.Data, tt.says)
		}
	}
	// A body no verb takes: every endpoint refuses it at once, without
	// side effects.
	subs := map[string]*nats.Subscription{}
	for _, verb := range messages.Verbs() {
		inbox := nats.NewInbox()
		sub, err := nc.SubscribeSync(inbox)
		if err != nil {
			t.Fatal(err)
		}
		subs[verb] = sub
		if err := nc.PublishRequest("lumen.demo.cmd."+verb, inbox, []byte(`{"nope":1}`)); err != nil {
			t.Fatal(err)
		}
	}
	for verb, sub := range subs {
		msg, err := sub.NextMsg(10 * time.Second)
		if err != nil {
			t.Errorf("%s: no answer: %v", verb, err)
			continue
		}
		if strings.Contains(string(msg.Data), "unknown command") {
			t.Errorf("%s: the catch-all answered a known verb: %s", verb, msg.Data)
		}
	}
	// A second answer would come from the catch-all, which handles its
	// requests in order and answers on the same connection: once it has
	// answered a later request, any second answer has come.
	if _, err := nc.Request("lumen.demo.cmd.nope", []byte(`{}`), 10*time.Second); err != nil {
		t.Fatalf("the catch-all after the known verbs: %v", err)
	}
	for verb, sub := range subs {
		if n, _, _ := sub.Pending(); n != 0 {
			msg, _ := sub.NextMsg(0)
			t.Errorf("%s answered twice; the second: %s", verb, msg.Data)
		}
	}
}

// messages.Verbs is the one list of the verbs a light's service serves:
// every endpoint registered on it (the light's, its device's, its
// tools', its agent's) is there, and each verb there has an endpoint.
// An endpoint missing from the list would be answered twice, once by
// the catch-all.
func TestEveryEndpointIsAKnownVerb(t *testing.T) {
	d := start(t, t.TempDir(), "demo")
	svc := d.Lights()[0].Service
	served := map[string]bool{}
	catchAll := 0
	for _, e := range svc.Info().Endpoints {
		if !strings.HasPrefix(e.Subject, "lumen.demo.cmd.") {
			continue // the fleet's and the groups'
		}
		verb := strings.TrimPrefix(e.Subject, "lumen.demo.cmd.")
		if verb == "*" {
			catchAll++
			continue
		}
		served[verb] = true
		if _, ok := slices.BinarySearch(messages.Verbs(), verb); !ok {
			t.Errorf("endpoint %s (%s) serves a verb messages.Verbs does not list: add it there", e.Name, e.Subject)
		}
	}
	for _, verb := range messages.Verbs() {
		if !served[verb] {
			t.Errorf("messages.Verbs lists %s, which no endpoint serves", verb)
		}
	}
	if catchAll != 1 {
		t.Errorf("%d endpoints on lumen.demo.cmd.*, want 1", catchAll)
	}
}

// list_sources tells each webhook source's URL on the daemon's HTTP
// port, which takes a POST.
func TestListSourcesGivesWebhookURLs(t *testing.T) {
	d := startWith(t, func(c *daemon.Config) { c.HTTP = "127.0.0.1:0" }, "demo")
	nc := connectTo(t, d)
	for _, src := range []string{
		`{"name":"door","type":"webhook","store":{"who":"result.who"},"fires":"doorbell"}`,
		`{"name":"bell","type":"nats","subject":"home.bell","fires":"doorbell"}`,
	} {
		if body, code := request(t, nc, messages.VerbCreateSource, src); code != "" {
			t.Fatalf("create_source: %s %s", code, body)
		}
	}
	body, code := request(t, nc, messages.VerbListSources, `{}`)
	var r struct {
		Sources     []json.RawMessage `json:"sources"`
		WebhookURLs map[string]string `json:"webhook_urls"`
	}
	want := d.WebhookURL() + "/hooks/demo/door"
	if err := json.Unmarshal(body, &r); err != nil || code != "" || len(r.Sources) != 2 || len(r.WebhookURLs) != 1 || r.WebhookURLs["door"] != want {
		t.Fatalf("list_sources: %s %s, want webhook_urls {door: %s}", code, body, want)
	}
	// The source manager reads the new source after the light has
	// journaled it: until then the URL is a 404.
	status := ""
	lumentest.Within(10*time.Second, func() bool {
		res, err := http.Post(r.WebhookURLs["door"], "application/json", strings.NewReader(`{"who":"Ann"}`))
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		status = res.Status
		return res.StatusCode == http.StatusAccepted
	})
	if status != "202 Accepted" {
		t.Errorf("POST %s: %s", r.WebhookURLs["door"], status)
	}

	// Without an HTTP port there is no URL to tell.
	d = start(t, t.TempDir(), "demo")
	nc = connectTo(t, d)
	request(t, nc, messages.VerbCreateSource, `{"name":"door","type":"webhook"}`)
	if body, _ := request(t, nc, messages.VerbListSources, `{}`); strings.Contains(string(body), "webhook_urls") {
		t.Errorf("without --http: %s", body)
	}
}

// startWith is start with a change to the configuration.
func startWith(t *testing.T, change func(*daemon.Config), lights ...string) *daemon.Daemon {
	t.Helper()
	cfg := daemon.DefaultConfig(t.TempDir())
	cfg.Listen, cfg.Lights, cfg.Sync, cfg.ClockMode, cfg.Hardware.Driver = "127.0.0.1:0", lights, broker.SyncBatch, "trust", "sim"
	cfg.HTTP = web.Off // a test that serves HTTP asks for a free port
	cfg.Logf = testLog(t)
	change(&cfg)
	d, err := daemon.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := d.Run(ctx); err != nil {
		t.Fatal(err)
	}
	return d
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// apply's if_seq: a configuration read, changed and applied is applied
// only if the light has not changed meanwhile.
func TestApplyIfSeq(t *testing.T) {
	d := start(t, t.TempDir(), "demo")
	nc := connectTo(t, d)
	c := wire.New(nc)
	var g messages.GetReply
	if err := c.Call(context.Background(), "demo", messages.VerbGet, nil, &g); err != nil {
		t.Fatal(err)
	}
	cfg := g.Config()
	cfg.Vars = nil
	cfg.States = append(cfg.States, messages.State{Name: "teal", G: messages.Channel{Num: 128}, B: messages.Channel{Num: 128}})
	// Someone else changes the light after the read.
	if body, code := request(t, nc, messages.VerbSetVar, `{"name":"x","value":1}`); code != "" {
		t.Fatalf("set_var: %s %s", code, body)
	}
	seq := lastSeq(t, nc)
	cfg.IfSeq = g.Seq
	body, code := request(t, nc, messages.VerbApply, string(mustMarshal(t, cfg)))
	if code != "409" || !strings.Contains(string(body), "changed since input") {
		t.Fatalf("an apply over a change made meanwhile: %s %s", code, body)
	}
	if lastSeq(t, nc) != seq {
		t.Fatal("the refused apply was journaled")
	}
	// Read again: applied.
	if err := c.Call(context.Background(), "demo", messages.VerbGet, nil, &g); err != nil {
		t.Fatal(err)
	}
	cfg.IfSeq = g.Seq
	if body, code := request(t, nc, messages.VerbApply, string(mustMarshal(t, cfg))); code != "" {
		t.Fatalf("an apply over the light as read: %s %s", code, body)
	}
}
