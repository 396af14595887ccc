package daemon_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/internal/lumentest"
)

// The push sources that come from outside NATS, in process: webhooks on
// the daemon's HTTP port and MQTT on its MQTT listener.

// hooksSourceErrors follows the demo light's error events of kind
// source, giving their error sentences.
func hooksSourceErrors(t *testing.T, nc *nats.Conn) <-chan string {
	t.Helper()
	out := make(chan string, 64)
	sub, err := nc.Subscribe("lumen.demo.evt.out.error", func(m *nats.Msg) {
		var ev struct{ Data struct{ Kind, Error string } }
		if json.Unmarshal(m.Data, &ev) == nil && ev.Data.Kind == "source" {
			select {
			case out <- ev.Data.Error:
			default:
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return out
}

// hooksRingRule gives the demo light a ring state that doorbell moves
// it to.
func hooksRingRule(t *testing.T, nc *nats.Conn) {
	t.Helper()
	mustOK(t, nc, "create_state", `{"name":"ring","r":255,"g":255,"b":0}`)
	mustOK(t, nc, "append_rules", `{"rules":[{"from":"*","on":"doorbell","to":"ring"}]}`)
}

// hooksVars is the demo light's variables.
func hooksVars(t *testing.T, nc *nats.Conn) map[string]any {
	t.Helper()
	v, _ := mustOK(t, nc, "get", `{}`)["vars"].(map[string]any)
	return v
}

// A webhook source stores what is POSTed to /hooks/<light>/<source> and
// fires, through the same journaled data inputs as a nats source; every
// request that can never be stored is refused with a clear status and
// changes nothing.
func TestHooksWebhookSource(t *testing.T) {
	d := startWith(t, func(c *daemon.Config) { c.HTTP = "127.0.0.1:0" }, "demo")
	base := d.WebhookURL()
	nc := connectTo(t, d)
	hooksRingRule(t, nc)
	const token = "a-long-random-token-0123456789"
	mustOK(t, nc, "create_source", `{"name":"door","type":"webhook","store":{"who":"result.who"},"fires":"doorbell"}`)
	mustOK(t, nc, "create_source", `{"name":"gate","type":"webhook","token":"`+token+`","store":{"said":"result.text"}}`)
	mustOK(t, nc, "create_source", `{"name":"bell","type":"nats","subject":"home.bell","fires":"doorbell"}`)

	post := func(path, contentType, body string, header ...string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	// Once create_source is answered, the webhook takes a POST.
	if code, body := post("/hooks/demo/door", "application/json", `{"who":"Ann"}`); code != http.StatusAccepted {
		t.Fatalf("POST right after create_source: %d %s", code, body)
	}
	lumentest.WaitFor(t, 20*time.Second, "Ann to be stored and the doorbell fired", func() bool {
		return hooksVars(t, nc)["who"] == "Ann"
	})
	if s := mustOK(t, nc, "get", `{}`)["state"]; s != "ring" {
		t.Fatalf("the webhook did not fire doorbell: state %v", s)
	}

	for _, c := range []struct {
		name, path, contentType, body string
		header                        []string
		code                          int
		want                          string
	}{
		{"unknown light", "/hooks/hall/door", "", `{}`, nil, 404, "no light hall"},
		{"unknown source", "/hooks/demo/nope", "", `{}`, nil, 404, "no webhook source nope"},
		{"a nats source is no webhook", "/hooks/demo/bell", "", `{}`, nil, 404, "no webhook source bell"},
		{"a stored path missing", "/hooks/demo/door", "text/plain", `ding dong`, nil, 400, "could not store who"},
		{"broken JSON", "/hooks/demo/door", "application/json", `{"who":`, nil, 400, "not valid JSON"},
		{"too large", "/hooks/demo/door", "application/json", `{"who":"` + strings.Repeat("x", 70<<10) + `"}`, nil, 413, "larger than 65536"},
		{"no token", "/hooks/demo/gate", "text/plain", "open", nil, 401, "needs the source's token"},
		{"wrong token", "/hooks/demo/gate", "text/plain", "open", []string{"Authorization", "Bearer wrong-token-0123456789"}, 401, "token"},
		{"token", "/hooks/demo/gate", "text/plain", "open sesame", []string{"X-Lumen-Token", token}, 202, `"ok":true`},
	} {
		code, body := post(c.path, c.contentType, c.body, c.header...)
		if code != c.code || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s, want %d containing %q", c.name, code, body, c.code, c.want)
		}
	}
	lumentest.WaitFor(t, 20*time.Second, "the text body to be stored", func() bool { return hooksVars(t, nc)["said"] == "open sesame" })
	if v := hooksVars(t, nc); v["who"] != "Ann" {
		t.Fatalf("a refused request changed who: %v", v["who"])
	}

	// The token is kept only as its hash: the journal, get and
	// list_sources never show it.
	b, _ := request(t, nc, "list_sources", `{}`)
	if strings.Contains(string(b), token) || !strings.Contains(string(b), "token_sha256") {
		t.Fatalf("list_sources: %s", b)
	}
	if b, _ := request(t, nc, "get", `{}`); strings.Contains(string(b), token) {
		t.Fatalf("get: %s", b)
	}
	verifyReplay(t, nc, "demo")
}

// An mqtt source hears an MQTT client's publishes through the embedded
// server's own MQTT listener (home/front/doorbell arrives on
// home.front.doorbell, which the topic home/+/doorbell matches) and acts
// like a nats source. A webhook source on a daemon without an HTTP port
// says how to turn it on.
func TestHooksMQTTSource(t *testing.T) {
	d := startWith(t, func(c *daemon.Config) { c.MQTT = "127.0.0.1:0" }, "demo")
	nc := connectTo(t, d)
	errs := hooksSourceErrors(t, nc)
	hooksRingRule(t, nc)
	mustOK(t, nc, "create_source", `{"name":"door","type":"mqtt","topic":"home/+/doorbell","store":{"who":"result.who"},"fires":"doorbell"}`)
	c := lumentest.DialMQTT(t, d.MQTTAddr(), "lumen-test", "", "")
	// The manager subscribes once it sees the definition.
	n := 0
	lumentest.WaitFor(t, 20*time.Second, "an MQTT publish to be stored", func() bool {
		n++
		c.Publish(t, "home/front/doorbell", fmt.Sprintf(`{"who":"Ann","n":%d}`, n))
		return hooksVars(t, nc)["who"] == "Ann"
	})
	c.Publish(t, "home/back/doorbell", `{"who":"Bob"}`)
	lumentest.WaitFor(t, 20*time.Second, "Bob, with Ann kept as who_prev", func() bool {
		v := hooksVars(t, nc)
		return v["who"] == "Bob" && v["who_prev"] == "Ann"
	})
	if s := mustOK(t, nc, "get", `{}`)["state"]; s != "ring" {
		t.Fatalf("the MQTT message did not fire doorbell: state %v", s)
	}
	// A message without the stored path is an error event, as over NATS.
	for len(errs) > 0 {
		<-errs
	}
	c.Publish(t, "home/front/doorbell", "ding dong")
	select {
	case e := <-errs:
		if !strings.Contains(e, "could not store who") {
			t.Fatalf("error event %q", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no error event for a message without who")
	}

	mustOK(t, nc, "create_source", `{"name":"hook","type":"webhook","fires":"doorbell"}`)
	select {
	case e := <-errs:
		if !strings.Contains(e, "--http 127.0.0.1:8080") {
			t.Fatalf("error event %q", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no error event for a webhook without an HTTP port")
	}
	verifyReplay(t, nc, "demo")
}
