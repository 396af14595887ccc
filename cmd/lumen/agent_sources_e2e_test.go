package main_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/agent/agenttest"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
)

// The agent sets up every kind of push source through createDataSource:
// an MQTT doorbell (an MQTT client's message changes the state), a
// motion sensor on GPIO 23 (lumen gpio changes it) and a webhook, whose
// token reaches the person in lumen ask's output, and neither the model
// nor the journal.
func TestAgentCreatesPushSources(t *testing.T) {
	t.Parallel()
	model := agenttest.New(
		agenttest.Step{Calls: []agenttest.Call{
			// New names: re-creating the light's blue and green would
			// wait for approval.
			scripted("createState", `{"name":"sky","r":0,"g":0,"b":255}`),
			scripted("createState", `{"name":"white","r":255,"g":255,"b":255}`),
			scripted("createState", `{"name":"lime","r":0,"g":255,"b":0}`),
			scripted("createDataSource", `{"name":"doorbell","type":"mqtt","topic":"home/doorbell","fires":"doorbell_rang"}`),
			scripted("createDataSource", `{"name":"motion","type":"gpio","pin":23,"fires":"motion"}`),
			scripted("createDataSource", `{"name":"gate","type":"webhook","token":"the-model-made-this-up","fires":"gate_opened"}`),
			scripted("appendRules", `{"rules":[{"from":"*","on":"doorbell_rang","to":"sky"},{"from":"*","on":"motion","to":"white"},{"from":"*","on":"gate_opened","to":"lime"}]}`)}},
		agenttest.Step{Content: "Blue when the doorbell rings, white on motion, green when the gate posts.",
			Expect: func(r agenttest.ChatRequest) error {
				for _, m := range r.Messages {
					if m.Role == "tool" && strings.Contains(m.Text(), `"url":"http://`) && strings.Contains(m.Text(), "/hooks/demo/gate") {
						return nil
					}
				}
				return fmt.Errorf("the model was not told the webhook's URL")
			}},
	)
	defer model.Close()
	d := startDaemon(t, t.TempDir(), "--mqtt", "127.0.0.1:0", "--http", "127.0.0.1:0", "--hardware", "sim",
		"--openai-base-url", model.URL+"/v1", "--model", "scripted")
	mqttAddr := d.Line(t, regexp.MustCompile(`lumen: mqtt on mqtt://(\S+)`))
	out, code := runCLI(t, d.URL, "ask", "flash blue when the doorbell rings (MQTT home/doorbell), white on motion (GPIO 23), green when the gate calls a webhook")
	if code != 0 {
		t.Fatalf("lumen ask: exit %d: %s", code, out)
	}
	m := regexp.MustCompile(`webhook gate: POST (http://\S+/hooks/demo/gate) with the header Authorization: Bearer ([0-9a-f]{32})`).FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "shown this once") {
		t.Fatalf("lumen ask does not give the webhook's URL and token:\n%s", out)
	}
	url, token := m[1], m[2]
	state := func() string { out, _ := runCLI(t, d.URL, "state"); return strings.TrimSpace(out) }

	c := lumentest.DialMQTT(t, mqttAddr, "lumen-e2e-agent", "", "")
	lumentest.WaitFor(t, 20*time.Second, "the doorbell's MQTT message to turn the light blue (sky)", func() bool {
		c.Publish(t, "home/doorbell", `{"ring":true}`)
		return state() == "sky"
	})
	if out, code := runCLI(t, d.URL, "gpio", "23", "high"); code != 0 {
		t.Fatalf("lumen gpio 23 high: exit %d: %s", code, out)
	}
	lumentest.WaitFor(t, 20*time.Second, "motion on GPIO 23 to turn the light white", func() bool { return state() == "white" })

	post := func(tok string) int {
		req, _ := http.NewRequest("POST", url, strings.NewReader(`{"open":true}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if code := post("the-model-made-this-up"); code != http.StatusUnauthorized {
		t.Fatalf("the model's own token was taken: %d", code)
	}
	if code := post(token); code != http.StatusAccepted {
		t.Fatalf("the person's token: %d", code)
	}
	lumentest.WaitFor(t, 20*time.Second, "the webhook to turn the light green (lime)", func() bool { return state() == "lime" })

	// The token is nowhere in the journal, nor in what the model saw.
	nc := connect(t, d.URL)
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
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		if msg, err := stream.GetMsg(ctx, seq); err == nil && strings.Contains(string(msg.Data), token) {
			t.Fatalf("the webhook's token is in the journal at %d: %s", seq, msg.Data)
		}
	}
	for _, r := range model.Requests() {
		for _, msg := range r.Messages {
			if strings.Contains(msg.Text(), token) {
				t.Fatal("the model saw the webhook's token")
			}
		}
	}
	if err := model.Err(); err != nil {
		t.Fatal(err)
	}
}

// testTool to a host no source and no tool of the light reaches waits for
// the person's approval, as a data source reaching it would (the tiers of
// known hosts: TestTestToolTier).
func TestTestToolToANewHostNeedsApproval(t *testing.T) {
	t.Parallel()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `{"price":42}`)
	}))
	defer api.Close()
	host := strings.TrimPrefix(api.URL, "http://")
	call := scripted("testTool", `{"name":"fetch_json","args":{"url":"`+api.URL+`/price"}}`)
	srv := agenttest.New(
		agenttest.Step{Calls: []agenttest.Call{call}},
		agenttest.Step{Content: "It answers 42."},
	)
	defer srv.Close()
	d := startDaemon(t, t.TempDir(), agentArgs(srv, "--allow-net", host)...)
	nc := connect(t, d.URL)
	events := lumentest.WatchAgent(t, nc, "demo")
	done := make(chan string, 1)
	go func() {
		out, _ := runCLI(t, d.URL, "ask", "what does the price API say?")
		done <- out
	}()
	ev := events.Next(t, messages.AgentKindApproval)
	if ev.Call == nil || ev.Call.Tool != "testTool" || ev.Call.Tier != messages.TierConfirm {
		t.Fatalf("approval %+v, want testTool at the confirm tier", ev)
	}
	mustOK(t, request(t, nc, "lumen.demo.cmd.approve", fmt.Sprintf(`{"id":%q,"who":"test"}`, ev.Approval)))
	if out := <-done; !strings.Contains(out, "It answers 42.") {
		t.Fatalf("lumen ask: %s", out)
	}
	if err := srv.Err(); err != nil {
		t.Fatal(err)
	}
}
