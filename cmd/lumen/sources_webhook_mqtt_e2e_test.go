package main_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/internal/lumentest"
)

// sourceErrors follows the light's error events of kind source.
func sourceErrors(t *testing.T, nc *nats.Conn) <-chan string {
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
	return out
}

func ringRule(t *testing.T, nc *nats.Conn) {
	t.Helper()
	mustOK(t, request(t, nc, "lumen.demo.cmd.create_state", `{"name":"ring","r":255,"g":255,"b":0}`))
	mustOK(t, request(t, nc, "lumen.demo.cmd.append_rules", `{"rules":[{"from":"*","on":"doorbell","to":"ring"}]}`))
}

// A webhook source stores what is POSTed to /hooks/<light>/<source> and
// fires, through the same journaled data inputs as a nats
// source; every request that can never be stored is refused with a
// clear status and changes nothing.
func TestWebhookSource(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := startDaemon(t, dir, "--http", "127.0.0.1:0")
	base := d.Line(t, regexp.MustCompile(`lumen: webhooks on (http://[^/\s]+)/hooks/LIGHT/SOURCE`))
	nc := connect(t, d.URL)
	vars := func() map[string]any {
		v, _ := mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Body["vars"].(map[string]any)
		return v
	}
	ringRule(t, nc)
	const token = "a-long-random-token-0123456789"
	mustOK(t, request(t, nc, "lumen.demo.cmd.create_source", `{"name":"door","type":"webhook","store":{"who":"result.who"},"fires":"doorbell"}`))
	mustOK(t, request(t, nc, "lumen.demo.cmd.create_source", `{"name":"gate","type":"webhook","token":"`+token+`","store":{"said":"result.text"}}`))
	mustOK(t, request(t, nc, "lumen.demo.cmd.create_source", `{"name":"bell","type":"nats","subject":"home.bell","fires":"doorbell"}`))

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
	// The manager takes the new definitions asynchronously: until then
	// the source is unknown (404).
	lumentest.WaitFor(t, 20*time.Second, "the webhook to be accepted", func() bool {
		code, _ := post("/hooks/demo/door", "application/json", `{"who":"Ann"}`)
		return code == http.StatusAccepted
	})
	lumentest.WaitFor(t, 20*time.Second, "Ann to be stored and the doorbell fired", func() bool {
		return vars()["who"] == "Ann"
	})
	if s := mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Body["state"]; s != "ring" {
		t.Fatalf("the webhook did not fire doorbell: state %v", s)
	}
	if out, _ := runCLI(t, d.URL, "source", "ls"); !strings.Contains(out, "door             webhook POST "+base+"/hooks/demo/door") {
		t.Errorf("source ls does not show the webhook's URL:\n%s", out)
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
	lumentest.WaitFor(t, 20*time.Second, "the text body to be stored", func() bool { return vars()["said"] == "open sesame" })
	if v := vars(); v["who"] != "Ann" {
		t.Fatalf("a refused request changed who: %v", v["who"])
	}

	// The token is kept only as its hash: the journal, get and
	// list_sources never show it.
	list := mustOK(t, request(t, nc, "lumen.demo.cmd.list_sources", `{}`))
	if strings.Contains(string(list.Raw), token) || !strings.Contains(string(list.Raw), "token_sha256") {
		t.Fatalf("list_sources: %s", list.Raw)
	}
	if out, code := runCLI(t, d.URL, "replay", "--light", "demo", "--verify"); code != 0 {
		t.Fatalf("replay --verify: %s", out)
	}

	// The HTTP port beyond loopback needs credentials, like --listen.
	out, code := runCLI(t, d.URL, "up", "--data", t.TempDir(), "--listen", "127.0.0.1:0", "--http", "0.0.0.0:0")
	if code != 2 || !strings.Contains(out, "without credentials") {
		t.Fatalf("--http 0.0.0.0:0 without credentials: exit %d: %s", code, out)
	}
}

// mqttClient is just enough of MQTT 3.1.1 to publish at QoS 0: CONNECT,
// PUBLISH, and PINGREQ, whose answer tells that the server has read
// every publish sent before it.
type mqttClient struct {
	conn net.Conn
	r    *bufio.Reader
}

// mqttString is an MQTT UTF-8 string: a 2-byte length, then the bytes.
func mqttString(s string) []byte {
	return append([]byte{byte(len(s) >> 8), byte(len(s))}, s...)
}

// mqttPacket is a control packet: its type and flags byte, the remaining
// length (a base-128 varint), then the rest.
func mqttPacket(header byte, rest []byte) []byte {
	out := []byte{header}
	n := len(rest)
	for {
		b := byte(n % 128)
		n /= 128
		if n > 0 {
			b |= 0x80
		}
		out = append(out, b)
		if n == 0 {
			break
		}
	}
	return append(out, rest...)
}

func dialMQTT(t *testing.T, addr, clientID string) *mqttClient {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	c := &mqttClient{conn: conn, r: bufio.NewReader(conn)}
	// Variable header: protocol name, level 4 (3.1.1), flags: clean
	// session, keep-alive 60 s; payload: the client id.
	connect := append(mqttString("MQTT"), 4, 0x02, 0, 60)
	connect = append(connect, mqttString(clientID)...)
	c.write(t, mqttPacket(0x10, connect))
	ack := c.read(t, 4)
	if ack[0] != 0x20 || ack[1] != 2 || ack[3] != 0 {
		t.Fatalf("CONNACK % x, want 20 02 00 00", ack)
	}
	return c
}

func (c *mqttClient) write(t *testing.T, b []byte) {
	t.Helper()
	_ = c.conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.conn.Write(b); err != nil {
		t.Fatalf("mqtt write: %v", err)
	}
}

func (c *mqttClient) read(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	_ = c.conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(c.r, b); err != nil {
		t.Fatalf("mqtt read: %v", err)
	}
	return b
}

// publish sends a QoS 0 PUBLISH and waits for a PINGRESP, so the server
// has passed the message on when it returns.
func (c *mqttClient) publish(t *testing.T, topic, payload string) {
	t.Helper()
	c.write(t, mqttPacket(0x30, append(mqttString(topic), payload...)))
	c.write(t, []byte{0xC0, 0})
	if b := c.read(t, 2); b[0] != 0xD0 || b[1] != 0 {
		t.Fatalf("PINGRESP % x", b)
	}
}

// An mqtt source hears an MQTT client's publishes through the embedded
// server's own MQTT listener (home/front/doorbell arrives on
// home.front.doorbell, which the topic home/+/doorbell matches) and acts
// like a nats source. A webhook source on a daemon without --http says
// how to turn it on.
func TestMQTTSource(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir(), "--mqtt", "127.0.0.1:0")
	addr := d.Line(t, regexp.MustCompile(`lumen: mqtt on mqtt://(\S+)`))
	nc := connect(t, d.URL)
	errs := sourceErrors(t, nc)
	vars := func() map[string]any {
		v, _ := mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Body["vars"].(map[string]any)
		return v
	}
	ringRule(t, nc)
	mustOK(t, request(t, nc, "lumen.demo.cmd.create_source", `{"name":"door","type":"mqtt","topic":"home/+/doorbell","store":{"who":"result.who"},"fires":"doorbell"}`))
	c := dialMQTT(t, addr, "lumen-e2e")
	// The manager subscribes once it sees the definition.
	n := 0
	lumentest.WaitFor(t, 20*time.Second, "an MQTT publish to be stored", func() bool {
		n++
		c.publish(t, "home/front/doorbell", fmt.Sprintf(`{"who":"Ann","n":%d}`, n))
		return vars()["who"] == "Ann"
	})
	c.publish(t, "home/back/doorbell", `{"who":"Bob"}`)
	lumentest.WaitFor(t, 20*time.Second, "Bob, with Ann kept as who_prev", func() bool {
		v := vars()
		return v["who"] == "Bob" && v["who_prev"] == "Ann"
	})
	if s := mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Body["state"]; s != "ring" {
		t.Fatalf("the MQTT message did not fire doorbell: state %v", s)
	}
	// A message without the stored path is an error event, as over NATS.
	for len(errs) > 0 {
		<-errs
	}
	c.publish(t, "home/front/doorbell", "ding dong")
	select {
	case e := <-errs:
		if !strings.Contains(e, "could not store who") {
			t.Fatalf("error event %q", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no error event for a message without who")
	}

	mustOK(t, request(t, nc, "lumen.demo.cmd.create_source", `{"name":"hook","type":"webhook","fires":"doorbell"}`))
	select {
	case e := <-errs:
		if !strings.Contains(e, "--http 127.0.0.1:8080") {
			t.Fatalf("error event %q", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no error event for a webhook without an HTTP port")
	}
	if out, code := runCLI(t, d.URL, "replay", "--light", "demo", "--verify"); code != 0 {
		t.Fatalf("replay --verify: %s", out)
	}
}
